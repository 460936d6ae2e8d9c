"""panic-triage: answers Rust panics pasted into GitHub issues and Discord from a catalog."""

__version__ = "0.1.0"
