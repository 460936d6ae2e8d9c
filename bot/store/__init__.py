"""The store: what the bot remembers between events (deliveries, the job queue, what it did on
each issue, answers, votes, maintainer controls, Discord replies). Every stage of the pipeline
reads and writes it; it depends on nothing of theirs but the settings.

- `interface`: `TriageStore`, the one definition of what a store does (the base class of both
  stores, with the SQL they share) and the records it hands out (`Job`, `IssueState`).
- `schema`: the tables and columns, declared once; each database's migrations derive from it.
- `sqlite`: `Store`, the embedded default (one SQLite file, one process).
- `postgres`: `PgStore`, shared by several `serve` replicas (leases, SKIP LOCKED).
- `open`: `open_store(settings)`, the one way to open the store `TRIAGE_DB` names, and
  `StoreUnusable`, the error a SQLite file that cannot be used is reported as.
- `thread`: `StoreAccess`, the store reached from the event loop on a thread of its own, and
  the store's health.
"""
