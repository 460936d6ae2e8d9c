"""Replies, the last stage: one answer model (answer/), its words (texts.py), and a renderer per
platform.

    answer = build_answer(analysis, catalog, history=history)  # bot.render.answer.build
    render_comment(answer)                          # bot.render.github: markdown + marker
    render_message(answer), render_plain(answer)    # bot.render.discord: embed dicts, fallback
    render_text(answer, color=...)                  # bot.render.terminal

Pure code: no network and no platform libraries; it imports only the core (bot.core) and the
catalog's record model and families.
"""
