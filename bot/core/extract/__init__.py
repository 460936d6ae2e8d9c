"""Text -> panics: stage 1 of the pipeline, pure (strings in, `bot.core.panic` values out).

`clean` strips what a paste holds besides its text (ANSI escapes, controls, tags); `log_prefixes`
knows log prefixes; `frames` reads backtrace lines; `wrappers` knows std's wrappers around a
message (`unwrap()`, assertions, `todo!`); `scanner` finds the panics (`extract_panics`): std's
headers, old and new, and messages pasted alone; `reports` reads the reports panic hooks and
banners print (human-panic, color-eyre, miette, burn-train's banner), one reader each, and
`hooks` a project's own hook declared in its catalog; `reading` is what the readers share;
`quoted` finds messages quoted without a header; `paths` reads and maps file paths.
"""
