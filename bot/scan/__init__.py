"""Scanning Rust sources for panic sites, and keeping a catalog in step with them: the offline
stage before the pipeline, whose output is the catalog the matcher reads.

`rust/` finds the sites of a source tree; `builders` reads the builder functions a catalog
author declares; `lineages` follows sites across a repository's releases (`history.ndjson`);
`update` brings a catalog to a new commit's scan; `catalog_io` reads and writes catalog files.
The `catalog scan`/`update`/`history` commands are in `bot.cli.scan`.
"""
