"""Every text the bot writes, in one place; tests check these word for word.

Templates use `{name}` placeholders filled by `bot.render.markup.words`. A backtick pair marks a
code span: `` `{location}` `` puts the value in code, shown as code on GitHub and Discord and
between backticks in the terminal. Text outside backticks is prose and is escaped by each
renderer; the words written here are trusted.
"""

from __future__ import annotations

# --- how sure we are, from the candidate's evidence -------------------------------------------
MATCH_MESSAGE_AND_LOCATION = "Matched the message and the location `{location}`."
MATCH_MESSAGE_AND_FILE = (
    "Matched the message and the file `{location}`; the catalogued line is {record_line}."
)
MATCH_MESSAGE_NO_LOCATION = "The message matches; the location was not pasted."
MATCH_MESSAGE_OTHER_LOCATION = (
    "The message matches; the pasted location `{location}` is not the catalogued one."
)
MATCH_MESSAGE_FUNCTION = (
    "The message matches, and the backtrace's panicking function `{function}` is this site's: "
    "the pasted `{location}` is where an older release kept it."
)
MATCH_CHECK_REASON = (
    "The message matches this check's reason; Rust prints where the check was called, "
    "`{location}`."
)
MATCH_MESSAGE_AND_CRATE = (
    "The message matches and `{crate}` is on the pasted stack; the location was not pasted."
)
MATCH_FUZZY_PREFIX = "The message is close to the catalogued one ({percent}% similar)"
MATCH_FUZZY_AND_LOCATION = MATCH_FUZZY_PREFIX + " and the location `{location}` matches."
MATCH_FUZZY_AND_FILE = (
    MATCH_FUZZY_PREFIX + " and the file `{location}` matches; the catalogued line is {record_line}."
)
MATCH_FUZZY_NO_LOCATION = MATCH_FUZZY_PREFIX + "; the location was not pasted."
MATCH_FUZZY_OTHER_LOCATION = (
    MATCH_FUZZY_PREFIX + "; the pasted location `{location}` is not the catalogued one."
)
MATCH_LOCATION_ONLY = (
    "Matched the location `{location}`; the message differs from the catalogued one."
)
MATCH_OTHER = "Matched with {percent}% confidence."

# --- the answer's parts ------------------------------------------------------------------------
NO_MESSAGE = "(the record has no message)"
SOURCE = "Source"
# With TRIAGE_PUBLIC_URL: the link to the record's page, after the first view (issue 27).
FULL_WRITE_UP = "Full write-up"
SOURCE_LABEL = "{file}:{line} @ {sha}"  # module.rs:1498 @ d16f7ba (plain text, shown as code)
SOURCE_LABEL_NO_LINE = "{file} @ {sha}"
SOURCE_LABEL_NO_SHA = "{file}:{line}"
WHAT_IT_MEANS = "What it means"
SOLUTIONS = "Solutions"
EXAMPLE_FIX = "Example fix"
RELATED_ERRORS = "Related errors"
MORE_SUMMARY = "When it happens, prevention and defensive patterns"
TRIGGER = "When it happens"
COMMON_SITUATIONS = "Common situations"
PREVENTION = "Prevention"
VALIDATION = "Validate before calling"
TYPE_GUARD = "Type guard"
TRY_CATCH = "Catch the panic"
SOURCE_CODE = "Source code around the panic"

VERSION_NOTE = (
    "Your paste shows `{crate}-{version}` at line {line}; this record was analysed at commit "
    "`{sha}`{date}, where the line is {record_line}, so the code has moved between the two."
)
VERSION_NOTE_NO_VERSION = (
    "Your paste shows line {line}; this record was analysed at commit `{sha}`{date}, where the "
    "line is {record_line}, so your code differs from that commit."
)
VERSION_NOTE_DATE = " ({date})"

CAUTION = (
    "Caution: catalog lint flagged this record as possibly mismatched: its write-up may describe "
    "a different error. Check the source link before relying on it."
)
UNVERIFIED_WRITE_UP = "The record's write-up (possibly mismatched)"
UNVERIFIED_SUFFIX = " (possibly mismatched)"  # Discord field names of a flagged record

FLAGGED_FAMILY = (
    "Catalog lint flagged this record's own write-up as possibly describing a different error, "
    "so it is left out. The panic belongs to the error family “{family}”, whose advice, written "
    "once for all its sites, follows. What the catalog knows:"
)
REMOVED_SITE = (
    "This panic site is no longer in the code as of commit `{sha}`; older versions still "
    "raise it, so the answer applies to the version you run."
)
# From the catalog's release history (issue 12); links are pinned to full commit SHAs, and
# labelled (issue 24): `{then}` and `{now}` are links such as `0.19.1 model_gen.rs:405`,
# `{compare}` a link `v0.20.1…v0.21.0`, `{change}` a link `#4393` (or the commit's short SHA).
HISTORY_THEN_NOW = "This panic was raised at {then}; today it lives at {now}."
HISTORY_REMOVED = (
    "This panic was removed in {project} {removed_in} (last seen in {last_seen}); what changed: "
    "{compare}."
)
HISTORY_REMOVED_THEN = (
    "This panic was raised at {then}. It was removed in {project} {removed_in} (last seen in "
    "{last_seen}); what changed: {compare}."
)
# Why a site left, from the commit that removed it (the history's events), said before the rest.
HISTORY_MOVED = (
    "This code moved to {destination} in {change} ({released}): upgrading {project} does not "
    "change it; look there."
)
HISTORY_FIXED = "Fixed in {change} ({released}): upgrade to {project} {released} or later."
# A draft the maintainer lets answer before review (`catalog review --drafts-answer on`).
UNREVIEWED_DRAFT = "Unreviewed draft, written by a model from the code: "
# A fixed or removed site's first step (plain text): the release to upgrade to comes first.
STEP_UPGRADE_FIXED = "Upgrade {project} to {released} or newer: {change} fixed this panic."
STEP_UPGRADE_REMOVED = (
    "Upgrade {project} to {released} or newer: the code that raised this panic is gone there "
    "({change})."
)
STEP_UPGRADE_REMOVED_PLAIN = (
    "Upgrade {project} to {released} or newer: the code that raised this panic is gone there."
)
STEP_UPGRADE_VIA = (
    "Upgrade to {own} or newer: it brings {project} {released}, where the code that raised this "
    "panic is gone."
)
STEP_UPGRADE_UNRELEASED = (
    "This panic is gone from {project}'s main branch ({change}) but not from any release yet: "
    "use the main branch, or avoid the call until the next release."
)
STEP_MOVED = (
    "This code moved to {destination} in {change}: use {destination} instead of the crate that "
    "panicked here."
)
HISTORY_CRATE_REMOVED = "{crate} was removed in {change} ({released})."
HISTORY_CRATE_REMOVED_UNRELEASED = (
    "{crate} was removed on the main branch in {change}; every release up to {last_seen} still "
    "has it."
)
HISTORY_GONE = "It was removed in {change} ({released})."
HISTORY_GONE_UNRELEASED = (
    "It was removed on the main branch in {change}; every release up to {last_seen} still has it."
)
# A dependency's panic (issue 25): whose code, which version, the check, the source at its tag.
DEPENDENCY_NOTE = (
    "This panic comes from {name} {version} ({repo}), a dependency, not {own}'s own code: "
    "{check}. Source at {tag}: {url}"
)
DEPENDENCY_NOTE_NO_VERSION = (
    "This panic comes from {name} ({repo}), a dependency, not {own}'s own code: {check}. "
    "Source: {url}"
)
DEPENDENCY_CHECK_VALIDATION = (
    "{name}'s validation reporting an invalid call made by the code above it"
)
DEPENDENCY_CHECK_VALIDATION_CALLER = (
    "{name}'s validation reporting an invalid call made by the code above it, here "
    "`{caller}` (the first {callers} frame of the backtrace)"
)
DEPENDENCY_CHECK_ASSERTION = "a check inside {name} on the arguments it was given"
DEPENDENCY_CHECK = "a panic inside {name}"
MOVED_NOTE = "This site moved to {repo}; it is answered from there."
# One message at several sites and nothing in the paste to tell them apart (issue 24): said, with
# the others linked, rather than one picked in silence.
TIE_NOTE = (
    "The same message is raised at {count} sites and the paste has no `panicked at` location to "
    "tell which; shown: {why}. The others:"
)
TIE_WHY_WRITTEN_UP = "the one with a write-up"
# A tie between sites of different functions: no sentence may say which one raised it.
TIE_MEANING = (
    "{count} functions print this message ({functions}) and the paste does not say which "
    "raised it; the sites are linked below."
)
TIE_WHY_FIRST = "the first in the catalog"
TIE_WHY_NAMED = "the one whose file or method the text names"
TIE_MORE = "and {count} more"
# The same, when the old project's history knows the commit that moved it (burn-import, #4393).
MOVED_NOTE_CHANGE = (
    "This code moved to {repo} with {change}, released in {project} {released}: upgrading "
    "{project} does not change it; it is answered from there."
)
MOVED_NOTE_CHANGE_UNRELEASED = (
    "This code moved to {repo} with {change} on {project}'s main branch: it is answered from there."
)
# --- the first view: what a reporter reads first ------------------------------------------------
FIRST_MEANING = "What it means:"
LATER_PANIC = "### {panic} · {source}"  # a later panic's first view: one line (GitHub)
SAME_AS_ABOVE = "Same explanation and solutions as for `{message}` above."
FIRST_SOLUTION = "Try first:"
MORE = "More: how it was matched, every solution and the details"
MORE_DISCORD = "Show more"
MORE_DISCORD_HINT = "Press “Show more” for every solution and the details."
# A record whose own write-up contradicts its family's code-checked explanation (lint).
CONTRADICTS_FAMILY = (
    "Caution: this record's own write-up says “{claim}”, which the explanation above, checked "
    "against the code, contradicts; it is kept here folded."
)

# A terminal cannot fold: the contradicted write-up is left out rather than shown after its caution.
CONTRADICTS_FAMILY_LEFT_OUT = (
    "Caution: this record's own write-up says “{claim}”, which the explanation above, checked "
    "against the code, contradicts; it is left out here."
)

CONTRADICTS_SHORT = (
    "This record's own write-up contradicts the checked explanation; it is under Show more."
)

# --- a bare site: the kind of check, from the macro and the message ------------------------------
KIND_ASSERT_GUARD = {  # (any project's words: no domain such as tensors is assumed)
    "shape": "An `{macro}` on sizes or shapes in `{crate}` failed: the values given do not fit "
    "this operation.",
    "dtype": "An `{macro}` on data types in `{crate}` failed: a value's data type is not the one "
    "this operation expects.",
    "device": "An `{macro}` on devices in `{crate}` failed: the values are not on the device "
    "this operation expects.",
}
KIND_ASSERT = "An `{macro}` in `{crate}` failed: a condition checked before going on did not hold."
KIND_UNIMPLEMENTED_DTYPE = (
    "An `{macro}` arm in `{crate}`: this operation is not implemented for the data type named "
    "in the message."
)
KIND_UNIMPLEMENTED_BACKEND = (
    "An `{macro}` in `{crate}`: this operation is not implemented by this backend."
)
KIND_UNIMPLEMENTED_FOR = (  # the message names the type of the site's `impl Trait for Type`
    "An `{macro}` in `{crate}`: this operation is not implemented for `{type}`."
)
KIND_UNIMPLEMENTED = "An `{macro}` in `{crate}`: this code path is not implemented."
KIND_EXPECT_ON = {
    "channel": "An `{macro}` on a channel in `{crate}` failed: the other end was closed, often "
    "because the thread on it stopped or panicked first.",
    "lock": "An `{macro}` on a lock in `{crate}` failed: the lock is poisoned, because a thread "
    "panicked while holding it.",
    "io": "An `{macro}` on a file or I/O operation in `{crate}` failed: the message says which "
    "one and why.",
}
KIND_EXPECT = (
    "An `{macro}` in `{crate}` failed: a value the code assumed present was missing or an error."
)
KIND_UNREACHABLE = (
    "An `{macro}` in `{crate}` was reached: a state the code assumes impossible, so likely a bug "
    "in `{crate}`."
)
KIND_PANIC_DTYPE = "A `{macro}` in `{crate}` for a data type this code does not handle."
KIND_PANIC = "A `{macro}` in `{crate}`: the code stops on a state it does not handle."

BARE_SITE = "No write-up yet for this panic site. What the catalog knows:"
FAMILY_SITE = (
    "No write-up yet for this panic site. It belongs to the error family “{family}”, "
    "whose advice, written once for all its sites, follows. What the catalog knows:"
)
FACT_RAISED_BY = "Raised by `{kind}`"
FACT_IN_FN = "In `fn {function}`"
FACT_IN_FN_IMPL = "In `fn {function}` of `{impl}`"

# --- several panics, and the rest --------------------------------------------------------------
SEVERAL_PANICS = "Found {count} catalogued panics; the likely root cause comes first."
OMITTED_ONE = "1 more catalogued panic is not shown."
OMITTED_MANY = "{count} more catalogued panics are not shown."
UNMATCHED_ONE = "1 other panic in this text is not in the catalog."
UNMATCHED_MANY = "{count} other panics in this text are not in the catalog."
TRIMMED = "Some long sections were left out to fit the message size limit; the record has them."

# --- footer ------------------------------------------------------------------------------------
FOOTER_ONE = "Automatic answer from the panic catalog, record `{ids}`."
FOOTER_MANY = "Automatic answer from the panic catalog, records `{ids}`."
# How to say the answer is wrong; one place, so it can change when the commands arrive.
WRONG_HINT = "Reply `/triage wrong` if this answer is wrong."
# Reporters vote with reactions (anyone can; the bot counts them); commands are for maintainers.
REACT_HINT = "React 👍 if this helped or 👎 if it is wrong; reactions are counted."
MAINTAINERS = "For maintainers"
MAINTAINERS_COMMANDS = (
    "Reply `/triage wrong` to remove this answer, `/triage match RECORD` to answer with another "
    "record, `/triage why` to show the evidence, `/triage ignore` to stop answering this issue.",
)
WRONG_HINT_DISCORD = "Press “Wrong match” if this answer is wrong."
VOTE_HINT_DISCORD = "Press Helpful or Wrong match, or react 👍/👎; votes are counted."

# --- verdict lines (terminal, and the minimal GitHub text for uncatalogued panics) -------------
NO_PANIC = "No panic found in the text."
UNCATALOGUED_ONE = "No catalogued panic found; 1 panic extracted:"
UNCATALOGUED_MANY = "No catalogued panic found; {count} panics extracted:"
MATCHED_ONE = "Matched 1 catalogued panic: record `{ids}`."
MATCHED_MANY = "Matched {count} catalogued panics: records `{ids}`."
PANIC_ITEM = "`{message}` at `{location}`"
PANIC_ITEM_NO_LOCATION = "`{message}` (no location pasted)"
MORE_PANICS = "and {count} more"
UNCATALOGUED_HINT = "The bot answers only panics that are in its catalog."
NOT_FOUND = "Not in the catalog: `{message}` at `{location}`."
NOT_FOUND_NO_LOCATION = "Not in the catalog: `{message}` (no location pasted)."
NOT_FOUND_CRATE = (
    "The panic `{message}` at `{location}`, raised in `{crate}`, is outside the catalog."
)
NEAREST = "Nearest records:"
NEAREST_ITEM = "`{id}` `{message}` ({percent}% confidence, too low to answer with)"
NO_NEAREST = "No catalog record comes close."
DRAFT_HINT = (
    "A maintainer can add it: `triage-bot stats` lists uncatalogued panics with a group id, and "
    "`triage-bot catalog draft GROUP` drafts a record to fill in."
)

# --- GitHub: when an edit removes the panic the comment answered ---------------------------------
NO_LONGER = "The panic this comment answered is no longer in the issue."

# --- Discord adapter: buttons, replies and forms (moved here from bot/discord/listener.py) -------
HELPFUL = "Helpful"
WRONG_MATCH = "Wrong match"
DISMISS = "Dismiss"
RECORD_NUMBER = " ({number})"  # appended to button labels when an answer has several records
VOTE_THANKS = "Thanks, your vote is recorded."
DISMISS_NOT_YOURS = "Only the author of the original message can dismiss this answer."
COOLDOWN = "Too many requests; try again in {seconds} s."
NO_PANIC_FOUND = "No panic found in that text."
NO_CATALOGUED_PANIC = "No catalogued panic found in that text."
NOTHING_TO_READ = "Paste the panic in `text`, attach it as a file, or leave both out for a form."
ERROR_NOT_FOUND = "No catalogued error matches `{query}`."
SOMETHING_WENT_WRONG = "Something went wrong while answering; the error has been logged."
MODAL_TITLE = "Explain a panic"
MODAL_LABEL = "Panic output"
MODAL_PLACEHOLDER = "thread 'main' panicked at ..."
EXPLAIN_MENU = "Explain this panic"

# --- GitHub: maintainers' `/triage` commands (bot/github/triage_command/handle.py) ---
# A stranger's command, answered at most once per issue.
COMMAND_REFUSED = (
    "Thanks, @{login}! Only people with triage rights on this repository can give the bot "
    "commands, so this one was not run. A maintainer will take a look."
)
# `/triage wrong`: the one line that replaces the answer.
WRONG_NOTE = (
    "A maintainer marked the automatic answer as wrong, so it was removed. "
    "Thanks for the correction."
)
# `/triage match ID`: the confidence line of an answer a maintainer chose.
MATCH_CHOSEN = "A maintainer chose this record for this issue."
# `/triage why`: the collapsed evidence section of the bot's comment.
WHY_SUMMARY = "Why this answer"
WHY_VERDICT = "Verdict: {verdict}."
WHY_NO_PANIC = "No panic was found in the issue's text."
WHY_PANIC = "Panic {index}: {message}"
WHY_AT = "  at {location}"
WHY_NO_LOCATION = "  (no location pasted)"
WHY_CANDIDATE = (
    "  {rank}. {record} confidence {confidence:.2f}, message {message:.2f}, evidence {evidence}"
)
WHY_NO_CANDIDATES = "  no catalog record comes close"
# Under a candidate: one step of how its confidence was reached, and the confidence after it.
WHY_STEP = "       {confidence:.2f}  {what}"
# Under a candidate a rule refused (bot.core.analysis.Refusal), by reason.
WHY_REFUSED = {
    "std-message": "     refused (std-message): Rust's standard library prints this message "
    "itself, and it was not pasted at this record's file",
    "other-file": "     refused (other-file): pasted at another file of the project, which "
    "the release history does not place at this site",
    "near-miss": "     refused (near-miss): the wording only resembles this record's, and it "
    "was pasted at another file",
    "removed-wording": "     refused (removed-wording): the paste is word for word the message of "
    "a site the release history records as removed, which this record's wording only resembles",
}
WHY_DECIDED_MATCH = "  decided: the best candidate is confident enough to answer with"
WHY_DECIDED_NO_MATCH = "  decided: no candidate is confident enough, so this panic is uncatalogued"
WHY_DECIDED_REPEAT = "  decided: same record as an earlier panic, answered once"
WHY_OVERRIDE_MATCH = "A maintainer chose record {record} with /triage match."
WHY_OVERRIDE_WRONG = "A maintainer marked record(s) {records} as wrong with /triage wrong."

# --- duplicates: other issues that hit the same record (bot/github/duplicates.py) ---
ALSO_REPORTED = "Also reported in {issues}."
ALSO_REPORTED_OPEN = "#{number} (open)"  # said, so an open issue is not taken for unknown
ALSO_REPORTED_CLOSED = "#{number} ({closed})"
# how a closed issue was closed, from GitHub's state_reason; unknown or other reasons: "closed"
CLOSED_AS = {"completed": "closed as completed", "not_planned": "closed as not planned"}
CLOSED_PLAIN = "closed"
CLOSED_IN = "{how} in {month} {year}"  # month from MONTH_NAMES, in UTC
CLOSED_FIXED_BY = "{how}, fixed by #{pull}"
MONTH_NAMES = (
    "January", "February", "March", "April", "May", "June",
    "July", "August", "September", "October", "November", "December",
)  # fmt: skip

# --- Discord: an attachment too large to read whole (bot/discord/listener.py) ------------------
ATTACHMENT_PARTLY_READ = (
    "`{filename}` is {size}: its first {head} and last {tail} were read, "
    "the {skipped} in between were skipped."
)
ATTACHMENT_HEAD_ONLY = "`{filename}` is {size}: only its first {head} were read."

# --- the first panic is an uncatalogued `unwrap()`, a later one is answered ---------------------
FIRST_NOT_CATALOGUED = (
    "The first panic in this text, `{message}`, is not in the catalog; the answer is for a "
    "later panic."
)

# --- what the code checks at a bare site (bot/render/answer/meaning.py, from the scan) ----------
# Who raises it: `Tensor::reshape`, `float_erf` of `FloatTensorOps` for `Candle`, `fn load`.
# (Shown as code, so plain: the templates put it between backticks.)
SUBJECT_METHOD = "{type}::{function}"
SUBJECT_TRAIT = "<{type} as {trait}>::{function}"
SUBJECT_FN = "{path}"  # burn_nn::loss::mse::forward
MEANS_UNLESS = "Raised by `{subject}` when `{code}` does not hold."
MEANS_WHEN = "Raised by `{subject}` when `{code}`."
MEANS_MISMATCH = "Raised by `{subject}` when `{code}` is not `{pattern}`."
MEANS_ARM = "Raised by `{subject}` when `{code}` is `{pattern}`."
MEANS_ARM_OTHER = "Raised by `{subject}` when `{code}` is none of the cases its `match` handles."
MEANS_MISSING = "Raised by `{subject}` when `{code}` is `None` or an error."
MEANS_ERROR = "Raised by `{subject}` when `{code}` fails with `{error}`."
MEANS_NOT_IMPLEMENTED = "`{subject}` is not implemented: it raises `{macro}`."
MEANS_UNREACHABLE = "Raised by `{subject}` at a point its code marks as unreachable."
MEANS_RAISED_IN = "Raised by `{macro}` in `{subject}`, in `{crate}`."
# First steps (plain text): each names the record's own condition or function.
# Plain text: code is quoted with backticks as a reader would type it.
STEP_ENV = (
    "The environment variable `{name}` is not set where `{subject}` runs: set it for the "
    "process that runs this code."
)
# A config's own check (`self` is the config the user built).
STEP_CONFIG_UNLESS = "Change the `{type}` you build so that `{code}` holds."
STEP_CONFIG_WHEN = "Change the `{type}` you build so that `{code}` is false."
STEP_NOT_IMPLEMENTED = (
    "`{function}` is not implemented for `{type}`: run that operation on another backend, or "
    "look for a newer {crate} that implements it."
)
# A check's report (a builder's declared prefix naming the operation): the project's check
# rejected the user's input.
MEANS_CHECK_REPORT = (
    "`{crate}` checks the arguments of `{operation}` before running it, and rejected yours for "
    "the reason above."
)
MEANS_CHECK_REPORT_MANY = (
    "`{crate}` checks the arguments of `{operation}` before running it, and rejected yours for "
    "{count} reasons; the first is above."
)
STEP_CHECK_REPORT = (
    "Change the arguments you pass to `{operation}` so that the check's `{code}` "
    "is false for them."
)
CALLED_AT = "Raised at"  # the pasted location of a check report, in the user's release
CALLED_AT_LABEL = "{crate} {version} {file}:{line}"
