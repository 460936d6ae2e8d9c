"""The pure core: text in, `Analysis` out. No files, no network, no platform libraries.

    extract/   the panics in a pasted text: cleaning, log prefixes, frames, wrappers, locations
    match/     those panics against the catalog's records: index, postings, scoring, drift,
               the release history, callers and cascades
    panic.py   what a panic is (message, location, frames); analysis.py what the matcher says

The core imports only the standard library, rapidfuzz, numpy, and the catalog's record model and
patterns (bot.catalog.model, bot.catalog.patterns): the app (bot.app) loads the catalog, reads its
history file and hands the core the parsed objects.
"""
