"""Matching: the panics extract/ found, against the catalog's records (a stage of the core).

index.py      the catalog indexed once: words -> records, files -> records, crate folders
postings.py   the index's candidate ranking over numpy arrays, for large catalogs
matcher.py    Matcher(catalog, index=..., history=...): scores candidates, decides the verdict
drift.py      a pasted message against a record's whose wording has drifted
releases.py   the release history (ReleaseHistory): where each site lived in every release
caller.py     records Rust prints at another place (#[track_caller], macro bodies)
cascade.py    which later panics are answered after an uncatalogued first one
crates.py     crate names as paths spell them
windows.py    a large input analysed a window at a time
"""
