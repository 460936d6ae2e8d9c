"""The catalog as a website (issue 27): a page per record, the list, the paste form, the JSON.

Pure page-building: records in, HTML or JSON out (Jinja2 templates under `templates/`, markdown
through markdown-it with raw HTML off). The server (bot.server.site_routes) and the static export
(`triage-bot catalog site`) call it; nothing here reads the network, a store or a secret.
"""
