"""Text -> panics: stage 1 of the pipeline, pure (strings in, `bot.core.panic` values out).

`clean` strips what a paste holds besides its text (ANSI escapes, controls, tags); `log_prefixes`
knows log prefixes; `frames` reads backtrace lines; `wrappers` knows std's wrappers around a
message (`unwrap()`, assertions, `todo!`); `scanner` finds the panics (`extract_panics`);
`quoted` finds messages quoted without a header; `paths` reads and maps file paths.
"""
