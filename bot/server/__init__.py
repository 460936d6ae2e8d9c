"""The HTTP side of `triage-bot serve`: the last stage's front door and its windows.

- `http` (I/O): the aiohttp application: `POST /github/webhook` (verify, store, queue),
  `GET /healthz`, `GET /metrics`, `GET /stats`; it wires settings, the store, the catalog, the
  GitHub pipeline and worker, and the Discord client into one process.
- `stats_page`: the stats page from the store's rows (reads the store, renders HTML).
- `catalog_swap`: the catalog sources followed (issue 26): refresh in a thread on webhooks and a
  timer, the new catalog swapped in whole; replicas agree on one target through the store.

The component checks behind `/healthz` are `bot.health` (shared with the store's thread).
"""
