"""The Discord adapter: answers pasted panics, `/panic`, `/error` and "Explain this panic"."""
