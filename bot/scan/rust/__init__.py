"""Panic sites in Rust sources, read with tree-sitter's Rust grammar.

`walk` finds the files and scans a tree (`scan_tree`); `site_finder` finds the sites of one file
(`scan_source`) and says where Rust reports each; `literals`, `messages`, `macros`,
`definitions` and `bindings` read the message a site holds (string literals, macro arguments,
the crate's macros and consts, `let` bindings); `cfg` tells test-only code; `grammar` holds the
grammar and its queries; `skeletons` turns sites into skeleton catalog records.
"""
