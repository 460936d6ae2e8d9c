"""Scanning Rust sources for panic sites, and keeping a catalog in step with them."""
