"""The answer: what the bot says about one input, before any platform formats it.

    parts.py   Answer, Section and their parts; CatalogLike, what the answer reads of a catalog
    build.py   build_answer(analysis, catalog, history=...): the matcher's result -> an Answer
    words.py   the sentences built from templates: confidence, kind of check, facts, verdict
    links.py   a record's source, pinned to a full commit id

The renderers (bot.render.github, .discord, .terminal) only format and escape an Answer.
"""
