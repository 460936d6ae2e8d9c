"""Replies: one answer model (answer.py), its words (texts.py), and a renderer per platform.

    answer = build_answer(analysis, catalog)        # bot.render.answer
    render_comment(answer)                          # bot.render.github: markdown + marker
    render_message(answer), render_plain(answer)    # bot.render.discord: embed dicts, fallback
    render_text(answer, color=...)                  # bot.render.terminal

Pure code: no network and no platform libraries.
"""
