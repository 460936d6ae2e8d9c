"""The error catalog, the pipeline's data: records (model), loading, validation, patterns,
families, import and lint. It imports nothing from the core or the app: the index and the
release history derived from a catalog are built by the app (bot.app)."""
