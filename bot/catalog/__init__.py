"""The error catalog: records, loading and validation, patterns, import and lint."""
