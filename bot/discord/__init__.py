"""The Discord adapter: answers pasted panics, `/panic`, `/error` and "Explain this panic".

An adapter of the pipeline, beside `bot.github`: `listener` decides (pure, no discord.py);
`client` runs the gateway events and the run loop; `views` holds the buttons and the form,
`app_commands` the slash commands and the message menu, `attachments` the reading of files;
`status` is what `/healthz` and `/metrics` show of it.
"""
