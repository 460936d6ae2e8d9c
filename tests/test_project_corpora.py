"""Real issue texts of Rust projects other than burn (tests/corpus_projects/<project>/), matched
against the records of that project's own `catalog scan`.

Each project folder holds `cases/*.md` (texts as reported, prose reworded), `labels.jsonl` (set
by hand against the scan before the bot ran), the same for the held-out part in `heldout/`
(chosen before the first run and never tuned on) and `catalog.jsonl` (the full scan: every
site of the project, so a false answer any of them would give counts).

Prints per-project figures (run with -s) and enforces them as counts: misses on catalogued
panics and false matches (zero on every tuned part), on the tuned part and, in its own test, on
the held-out part (reported as counts only, never by case name).
"""

from __future__ import annotations

import pytest
from corpus_scoring import HELDOUT, PROJECTS, figures, print_details, read_cases, score

from bot.app import Triage
from bot.catalog.loader import load_catalog

# Projects scanned on their own; cubecl's and burn-onnx's texts (no catalog.jsonl) are scored
# against the bundled catalog of burn's tracker, in test_family.py.
NAMES = sorted(
    p.name
    for p in PROJECTS.iterdir()
    if (p / "labels.jsonl").is_file() and (p / "catalog.jsonl").is_file()
)
# The most misses per project, (tuned part, held-out part): today's counts, no margin, as the
# top-1 floors these replace (bevy 80% and 50%, tokio 85% and 75%) were at today's figures and
# are never lowered.
# The second round's texts (labelled before they ran) set helix at (1, 2) and uv at (0, 0).
# nushell's third round (22 texts, labelled before they ran) set it at (1, 2).
MISSES = {
    # The seventh and eighth rounds' texts (350 more, labelled before they ran) set bevy,
    # tokio, helix, deno and uv here; that round's rules (service prefixes, Err-literal arms,
    # exported macro bodies, reworded successors, openings, words over a long value) lowered them.
    # The sixth round's texts (labelled before they ran) raised the counts here; bevy's bare
    # unwraps and its 0.8-0.15 commands/mod.rs B0003 texts since relabelled uncatalogued.
    # The tenth round's error-enum rule (a `panic!("{}", err)` site has its error variants'
    # texts) lowered bevy's tuned count: its scene spawner's texts.
    # The linker's one-site-per-function rule (2026-12-05), with every history rebuilt whole,
    # lowered bevy's held-out count (two rewordings its history now follows).
    # A message of several lines cut at a line break (placeholders filled, 2026-12-06) lowered
    # bevy's and rust-analyzer's held-out counts.
    "bevy": (7, 3),  # 136 more texts (three rounds)
    # The tenth round's older-wording rule answered tokio's 1.47 `spawn_local` wording (tuned),
    # its prose-in-a-block rule deno's serde_v8 message quoted in a `text` block, and its
    # header-without-message rule rust-analyzer's make.rs and uv's rayon-pool texts, and its
    # flat-header rule tokio's `src/..rs:94:17: all branches are disabled ..` title (tuned);
    # its unstopped-first-sentence rule a tuned tokio title and one held-out tokio text; its
    # odd-backtick rule rust-analyzer's make.rs title cut inside a value, and its title-words
    # rule a tokio title with words before the message (tuned).
    "tokio": (9, 2),  # 185 more texts (four rounds); 53 held-out catalogued panics
    # An old header cut after its `', ` (the location gone) keeps its message whole since
    # 2026-12-07, which raised helix's held-out count.
    "helix": (0, 2),  # 118 more texts (three rounds)
    "nushell": (0, 0),  # with its release history
    "uv": (0, 0),  # 13 more texts, none catalogued held out
    "polars": (0, 0),  # with its release history and the first-sentence rule
    "rust-analyzer": (2, 0),  # three rounds, each labelled before it ran
    # ruff (astral-sh/ruff with ty, 2026-12-06): 21 texts labelled before they ran; two of the
    # first 12 were false answers (a paste replacing the word its message opens with), gone with the
    # sibling-message rule.
    "ruff": (1, 0),  # a title quoting the message with its first letter cut
    # wgpu (gfx-rs/wgpu, 2026-12-06): 8 texts labelled before they ran, scanned without its
    # history: the default error handler's 0.7 wording (its two lines swapped since) is missed
    # twice, and its message alone in a block says too little.
    "wgpu": (2, 1),
    "egui": (0, 0),  # 5 texts (2026-12-06), labelled before they ran
    # clap (clap-rs/clap with its 3.0-4.6 history, 2026-12-06): 25 texts labelled before they
    # ran, none tuned on yet: wordings no scanned release has (clap 2's, a cut old header), a
    # pasted tail of a message at a pre-release's file, a wording that left with a crate split,
    # a header without its message in a code span. The 4.0 wording's lineage is followed since
    # the linker pairs a function's only sites reworded around the same words.
    "clap": (3, 1),
    "axum": (0, 0),  # 20 texts (2026-12-06) with its 0.2-0.8 history, labelled before they ran
    # tauri (2026-12-06, 14 texts with its 1.0-2.0 history, labelled before they ran): quotes in
    # prose and titles of a format mostly of placeholders (`Failed to setup app: {e}`), and a
    # newer wording than the scan's in another program's own panic report. A last word printed
    # as a value (2026-12-07) lowered its held-out count.
    # A hook's labelled `Location: [..]` / `Message: [..]` lines read (2026-12-07) lowered its tuned
    # count (a user's own hook printing them, brackets and all). A quoted message matched at
    # the one location the prose writes (2026-12-07) lowered it again.
    "tauri": (1, 1),
    # typst (typst/typst with its 0.1-0.15 history, 2026-12-06): 19 texts labelled before they
    # ran, mostly panics no site prints (std's checks, bare assertions, krilla's); the first run
    # missed both catalogued ones: a debug build's assertion after Rust's newer str-slicing
    # message (not then known as std's), and a 0.12 wording whose file moved crate as it changed.
    "typst": (0, 0),
    # leptos (leptos-rs/leptos with its 0.1-0.8 history, 2026-12-06): 10 texts labelled before
    # they ran, all 7 catalogued panics answered on the first run (a browser console's header,
    # color-eyre behind compose prefixes, a 0.6 crate's wording, a title).
    "leptos": (0, 0),
    # ratatui (ratatui/ratatui with tui 0.1 - ratatui 0.30, 2026-12-06): 24 texts labelled
    # before they ran; first run tuned 10 of 14, held out 2 of 4, 0 false: tui's wording of
    # Buffer::index_of's check (a rewording the linker did not follow) and a hook logging
    # PanicInfo's Debug form.
    "ratatui": (0, 2),
    # pyo3 (PyO3/pyo3 with its 0.5-0.29 history, 2026-12-06): 17 texts labelled before they ran;
    # first run tuned 2 of 6, held out 0 of 2, 0 false: pull requests naming the message they
    # fix (not answered by design), a message moved to another file and edited in 0.26, and a
    # `PanicException` line that is one code span (read since).
    # A site new elsewhere in the crate the release its site left answers for it (2026-12-06).
    "pyo3": (2, 2),
    # arrow-rs (apache/arrow-rs with its 10.0-59.0 history, 2026-12-06): 18 texts labelled
    # before they ran, mostly panics no site prints (std's index checks, bare assertions, other
    # projects' code); the first run answered all 5 catalogued ones (registry paths of five
    # releases, color-eyre, a title) and none of the 13 others.
    "arrow-rs": (0, 0),
    # tracing (tokio-rs/tracing at tracing-subscriber-0.3.23 with its subscriber 0.2.25-0.3.23
    # history, 2026-12-06): 14 texts labelled before they ran; first run tuned 8 of 9, held out 2
    # of 3, 0 false. The tuned miss, a title quoting the first line of a two-line message
    # (placeholder filled), is answered since a message of several lines is searched and scored
    # on its lines down to a break.
    "tracing": (0, 1),
    # zellij (zellij-org/zellij with its 0.20-0.45 history, 2026-12-06): 21 texts labelled before
    # they ran; first run tuned 1 of 4, held out 0 of 3, 0 false: its panic hook's miette report
    # (`× Thread 'screen' panicked.` / `├─▶ At FILE:L:C` / `╰─▶ MESSAGE`) was not read, and its
    # `fatal()` helper, `#[track_caller]` in the trait only, was not known to print the caller.
    # Both read since (a miette report naming any thread; the trait's attribute), held out 1 of 3;
    # 3 of 3 since a quoted message is matched at the one location the prose writes.
    "zellij": (0, 0),
    # rerun (rerun-io/rerun with its 0.10-0.36 history, 2026-12-06): 18 texts labelled before they
    # ran, one catalogued: its hook prints the location alone on the line below the header
    # (read since); `unwrap_debug_or_log_error`'s all-placeholder `{file}:{line} {err}`,
    # printed at the caller, is found from the backtrace's frame but scores 0.53, unanswered.
    "rerun": (1, 0),
    # sqlx (launchbadge/sqlx with its 0.5-0.8 history, 2026-12-07): 20 texts labelled before they
    # ran; first run tuned 4 of 4, held out 1 of 2, 0 false.
    "sqlx": (0, 1),
    # nalgebra (dimforge/nalgebra with its 0.18-0.35 history, 2026-12-07): 18 texts labelled
    # before they ran; first run tuned 1 of 4, held out 1 of 2, 0 false. Read since: a Windows
    # backtrace's `impl$N` frame (the type unnamed) and a title's single-quoted message.
    "nalgebra": (1, 1),
    # wasm-bindgen (with its 0.2.50-0.2.127 history, 2026-12-07): 18 texts labelled before they
    # ran; first run tuned 3 of 6, held out 0 of 4, 0 false: its extern shims are a `quote!`
    # body printed in js-sys and web-sys, capped as crates that never printed the message. A
    # proc macro's output is known since (`proc-macro-output`), held out 4 of 4.
    "wasm-bindgen": (0, 0),
    # alacritty (with its 0.1.1-0.17.0 history, 2026-12-07): 18 texts labelled before they ran,
    # every catalogued one a site removed since (history/ holds the removed sites `catalog
    # history` writes, as a maintainer's catalog does); first run tuned 4 of 4, held out 2 of 2,
    # 0 false.
    "alacritty": (0, 0),
    # biome (biomejs/biome with its 1.x `cli/v` and 2.x `@biomejs/biome@` tags, 2026-12-07): 18
    # texts labelled before they ran; first run tuned 7 of 7, held out 2 of 2, 0 false, on a
    # history built once the history's tags behind a folder or a package name were read as their
    # versions (found building it: those tags sorted by name). Its hook's `Source Location:` /
    # `Thread Name:` / `Message:` lines are read since (the location was not: answers came from
    # the message alone, and a std message there was taken for prose).
    "biome": (0, 0),
    # cargo (rust-lang/cargo, 2026-12-07): 18 texts labelled before they ran, its 0.1-0.99
    # history with the removed sites; its resolver and compiler folders moved from
    # src/cargo/core/ to src/ after 0.99. First run: tuned 6 of 7 with one false answer (a
    # versionless paste at the old file and a line one release had the live site at, answered
    # with a removed site of the same message in that file), held out 1 of 3, 0 false. A
    # relative `src/..` path is read as the root package's file in the history since, and a
    # line that only one site of the message ever had names it without a version.
    "cargo": (0, 1),
    # rustfmt (rust-lang/rustfmt, 2026-12-07): 18 texts labelled before they ran, its
    # 0.2.10-1.10.0 history with the removed sites; first run tuned 6 of 6, held out 4 of 5,
    # 0 false; no rule added. Held out 5 of 5 since a quoted message is matched at the one
    # location the prose writes.
    "rustfmt": (0, 0),
    # gitoxide (GitoxideLabs/gitoxide, 2026-12-07): 18 texts labelled before they ran, its
    # git-repository/gix history (crates renamed git-* to gix-*, each crate versioned apart)
    # with the removed sites; first run tuned 3 of 4, held out 2 of 2, 0 false. An old
    # header cut before its location is read to its closing quote since (assert_eq's lines).
    "gitoxide": (0, 0),
    # hyper (hyperium/hyper, 2026-12-07): 21 texts labelled before they ran, its 0.10-1.11
    # history with the removed sites; first run tuned 5 of 6 with one false answer, held out
    # 1 of 3 with one false answer (a title's message printed at sites of three files, the
    # file only in a link or a crash report's payload). Since, a registry path's version is read
    # as the text's (a quoted message goes to the sites that release had), and the file a text
    # names stays first among a message's sites through the later stages (`named` evidence):
    # tuned 6 of 6, held out 2 of 3, 0 false.
    "hyper": (0, 1),
    # rayon (rayon-rs/rayon, 2026-12-07): 18 texts labelled before they ran, its rayon-core
    # 1.1-1.13 history with the removed sites; first run tuned 4 of 4, held out 1 of 1, 0 false;
    # no rule added.
    "rayon": (0, 0),
    # actix-net (actix/actix-net, 2026-12-07): 21 texts labelled before they ran, its actix-rt
    # 0.1-2.12 history with the removed sites; first run tuned 3 of 5 with two false answers,
    # held out 2 of 2, 0 false. Since, a crate named only by the project's prefix (the actix
    # actor crate beside actix-rt) is no crate of the project, and std's macro location of
    # old Rust (`<::std::macros::panic macros>:2:4`) ends an old header's message: tuned 4 of 5.
    # The miss is a backtrace without its message.
    "actix-net": (1, 0),
    # image (image-rs/image, 2026-12-07): 18 texts labelled before they ran, its 0.21-0.25
    # history with the removed sites; first run tuned 2 of 3, held out 0 of 1, one false answer
    # in each: the encoders' `Invalid buffer length: ..` is printed word for word by twelve
    # encoders, and neither text says which (the message alone; a `#[track_caller]` header at
    # the caller in io/encoder.rs), so one of the twelve was answered. No rule added then; the
    # tuned one is answered since at the site of the method its prose names.
    "image": (0, 1),
    # dioxus (DioxusLabs/dioxus, 2026-12-07): 15 texts labelled before they ran, its 0.1-0.7
    # history with the removed sites; first run tuned 2 of 3, held out 1 of 2, 0 false. The tuned
    # miss: an old header whose `',` lost its space before a shortened path (read since), at
    # the desktop crate's `unimplemented!("path {}")`, a message too short to answer alone.
    "dioxus": (1, 1),
    # iced (iced-rs/iced, 2026-12-07): 18 texts labelled before they ran, its 0.1-0.14 history
    # with the removed sites; most are other crates' panics in iced apps (wgpu's, whose crate
    # name is iced's `wgpu/` folder's too). First run tuned 2 of 2, held out 1 of 1, 0 false.
    "iced": (0, 0),
    # rust-bindgen (rust-lang/rust-bindgen, 2026-12-07): 15 texts labelled before they ran, its
    # v0.19-v0.72 history with the removed sites; mostly its libclang expect and other crates'
    # panics with its words (clang-sys's). First run tuned 3 of 4, held out 3 of 3, 0 false.
    # The miss: `expect("C'mon")`, two words, printed at libcore by 2017's Rust; its frame was
    # read since (a backtrace cut with `...` lines), but a message that short stays capped.
    "rust-bindgen": (1, 0),
    # atuin (atuinsh/atuin, 2026-12-07): 16 texts labelled before they ran, its v0.6-v18.19
    # history with the removed sites. First run tuned 3 of 3 with one false answer, held out
    # 3 of 3: std's `println!` panic on a broken pipe (`failed printing to stdout: ..` at std's
    # stdio.rs), which a later atuin site repeats in its own `panic!`; std's print and
    # thread-local panics are std's own messages since (std_messages.py), no false answer.
    "atuin": (0, 0),
    # delta (dandavison/delta, 2026-12-07): 9 texts labelled before they ran, its 0.0.1-0.19.2
    # history. First run tuned 1 of 2, held out 1 of 1, 0 false; the miss was a panic pasted as
    # a hex dump of the terminal's output (xxd), read since (a dump's bytes are decoded).
    "delta": (0, 0),
    # gitui (gitui-org/gitui, 2026-12-07): 12 texts labelled before they ran, its v0.1-v0.28
    # history. First run tuned 2 of 4, held out 1 of 4, 0 false. The misses are its hook's
    # `PanicHookInfo { .. location: .. }` (Rust 1.81's, which prints no message): read since
    # as a header whose message was left out, answered only when the prose quotes it.
    "gitui": (2, 3),
    # vulkano (vulkano-rs/vulkano, 2026-12-07): 16 texts labelled before they ran, its 0.12-0.35
    # history with the removed sites (most of its panics are old releases'); first run tuned 1
    # of 1, held out 1 of 2, 0 false. No rule added.
    "vulkano": (0, 1),
    # tantivy (quickwit-oss/tantivy, 2026-12-07): 15 texts labelled before they ran, its 0.1-0.26
    # history with the removed sites (most of its reported panics are std's checks inside its
    # code); first run tuned 2 of 2, held out 1 of 3, 0 false. No rule added.
    "tantivy": (0, 2),
    # glium (glium/glium, 2026-12-07): 13 texts labelled before they ran, its 0.4-0.36 history
    # with the removed sites; first run tuned 1 of 2, held out 2 of 3, 0 false. The tuned miss
    # is early 2015's debug-callback panic printed from lib.rs, before the first tagged release
    # moved it to context/mod.rs: another file, which the history cannot place. No rule added.
    "glium": (1, 1),
    # cpal (RustAudio/cpal, 2026-12-07): 11 texts labelled before they ran, its 0.0.1-0.18 history
    # with the removed sites; first run tuned 2 of 2 with one false answer, held out 1 of 2. No
    # rule added.
    "cpal": (0, 1),
    # starship (starship/starship, 2026-12-07): 7 texts labelled before they ran, its v0.2-v1.26
    # history with the removed sites (its reported panics are mostly std's and bare unwraps);
    # first run tuned 1 of 1, none wrong; its held-out part has no catalogued panic.
    "starship": (0, 0),
    # reqwest (seanmonstar/reqwest, 2026-12-07): 6 texts labelled before they ran, its v0.1-v0.13
    # history with the removed sites (rustls's and tokio's panics beside its own); first run
    # tuned 2 of 2, none wrong; its held-out part has no catalogued panic.
    "reqwest": (0, 0),
    # ndarray (rust-ndarray/ndarray, 2026-12-07): 12 texts labelled before they ran, its 0.7-0.17
    # history with the removed sites, `ndassert!` declared as in the bundled catalog (burn uses
    # ndarray, so its shape panics were seen in burn's corpus); first run tuned 3 of 3, held out
    # 2 of 2, none wrong.
    "ndarray": (0, 0),
    # candle (huggingface/candle, 2026-12-07): 7 texts labelled before they ran, its 0.5-0.11
    # history with the removed sites; none of its reported panics is one it prints (cudarc's,
    # bindgen_cuda's, a user's unwrap of its error; its errors are returned): first run none
    # answered, none wrong.
    "candle": (0, 0),
    # wasmtime (bytecodealliance/wasmtime, 2026-12-07): 15 texts labelled before they ran, its
    # v0.2-v48 history with the removed sites (the old register allocator's, ISLE's lowering
    # panic, now an error); first run tuned 4 of 5, held out 2 of 2, none wrong; the miss, an
    # older wording pasted at its file, went with the rule that a site's lineage's older
    # wordings at the pasted file are its own.
    "wasmtime": (0, 0),
    # rustls (rustls/rustls, 2026-12-07): 17 texts labelled before they ran, its 0.1-0.23 history
    # with the removed sites (the missing-provider expect in both wordings, gone from HEAD); first
    # run tuned 9 of 10, held out 5 of 5, none wrong. The miss: a three-word message quoted in
    # prose with no location (`"Invalid private key"`), too generic alone to answer on.
    "rustls": (1, 0),
    # chrono (chronotope/chrono, 2026-12-07): 11 texts labelled before they ran, its 0.4.0-0.4.45
    # history with the removed sites; first run tuned 4 of 5, held out 2 of 3, none wrong. The
    # tuned miss, old Rust's `expect` printed at libcore with the crate's line written in the
    # prose, went with the rule that such a written location places a std-placed panic.
    "chrono": (0, 1),
    # rand (rust-random/rand, 2026-12-07): 9 texts labelled before they ran, its 0.5-0.10 history
    # with the removed sites; first run tuned 3 of 4, held out 2 of 2, none wrong. The miss, an
    # old header quoted inline with the note joined onto its line, went with the rule that an old
    # header's location may have more text after it.
    "rand": (0, 0),
    # once_cell (matklad/once_cell, 2026-12-07): 6 texts labelled before they ran, its 1.x history
    # with the removed sites (Lazy's poisoned panic, printed by six sites of one file; std's Once
    # message beside it); first run tuned 1 of 1, held out 1 of 1, none wrong.
    "once_cell": (0, 0),
    # actix-web (actix/actix-web, 2026-12-07): 9 texts labelled before they ran, its 0.1-4.15
    # history with the removed sites; its users quote its extractors' 500 bodies (`App data is
    # not configured ..`) as they would a panic: first run none answered, none wrong.
    "actix-web": (0, 0),
    # neovide (neovide/neovide, 2026-12-07): 13 texts labelled before they ran, its 0.1-0.16
    # history with the removed sites; its own panic hook's lines (no hook declared in a scan
    # setting) beside old std headers; first run tuned 5 of 5, held out 3 of 3, none wrong.
    "neovide": (0, 0),
    # bottom (ClementTsang/bottom, 2026-12-07): 6 texts labelled before they ran, its 0.2-0.14
    # history; none of its reported panics is one it prints (std's slice checks, one at its own
    # file; another crate published as btm; crossterm_winapi's): first run none answered, none
    # wrong.
    "bottom": (0, 0),
    # wezterm (wezterm/wezterm, 2026-12-07): 16 texts labelled before they ran, its 67 dated
    # releases' history; one catalogued panic (a removed panic! of mux's logical line), the rest
    # unwraps, std's checks and dependencies' panics, several printed only by its own panic
    # hook's log line (`panic at PATH:L:C - MESSAGE`, no hook declared): first run 1/1, none
    # wrong; three hook-only texts read as no panic. Since `catalog scan` drafts the hook's
    # pattern from its code (its `hooks.toml` beside the scan), they are read as panics.
    "wezterm": (0, 0),
    # rust-openssl (rust-openssl/rust-openssl, 2026-12-07): 13 texts labelled before they ran,
    # its 0.0.2-0.9.109 history: first run 2/3 tuned, 3/3 held out, none wrong. Its most
    # reported panic (openssl-sys's build script: a message built with format! in a local,
    # then `panic!(msg)`) was no site until the scanner read such locals; relabelled after
    # the rebuild, four of those five pastes are answered (an old header whose quote never
    # closes, a build script's older wording), not the one holding only its last paragraph,
    # nor the locking expect two removed sites print alike.
    "rust-openssl": (2, 0),
    # prost (tokio-rs/prost, 2026-12-07): 17 texts labelled before they ran (most from other
    # projects' trackers, where prost-build's panic lands), its 0.1-0.14 history: first run 3/4
    # tuned, 3/3 held out, none wrong; the miss, a path Bazel's rules_rust names
    # `crate_index__prost-build-0.11.9`, went with the reading of that folder name.
    "prost": (0, 0),
    # cmake-rs (rust-lang/cmake-rs, 2026-12-07): 7 texts labelled before they ran (from the
    # trackers of crates that build C code with it), its 0.1.14-0.1.57 history; its panics are
    # its `fail` helper's, the reason passed in by the caller: first run 3/4 tuned, 1/2 held
    # out, none wrong (the helper's generic site answering, or the reason alone unanswered).
    # With the scanner reading a panic helper's calls as sites (relabelled: the call, or the
    # helper's own site) all six are answered.
    "cmake-rs": (0, 0),
    # sled (spacejam/sled, 2026-12-07): 7 texts labelled before they ran, its 0.15-0.34 history
    # (the 0.x engine, removed since): first run 3/3 tuned, 1/1 held out, none wrong.
    "sled": (0, 0),
    # zola (getzola/zola, 2026-12-07): 7 texts labelled before they ran, its 0.0.2-0.22
    # history: one catalogued panic (the highlighter's removed expect), the rest std's checks
    # at its own files, an unwrap and dependencies' panics: first run 1/1, none wrong.
    "zola": (0, 0),
    # gleam (gleam-lang/gleam, 2026-12-07): 6 texts labelled before they ran, its 0.1-1.18
    # minor releases' history; its panics come through its own hook (`Panic: PATH:LINE`, then
    # the message tab-indented; earlier the location and message alone), undeclared: first run
    # 3/4 tuned (the message quoted, its location read from the text), 1/1 held out, none
    # wrong; missed, the hook's report JSON-escaped inside an editor's log line, answered
    # since a quoted string with escaped line breaks on a log line is read as its lines.
    "gleam": (0, 0),
    # slint (slint-ui/slint, 2026-12-08): 18 texts labelled before they ran, its 1.0-1.17
    # history (the interpreter's sites removed at the analysed commit kept as removed sites):
    # first run 6/6 tuned, 4/4 held out, none wrong; one of an app's own panic log read as no
    # panic (its `location:` and `panic info:` lines, std's RefCell message).
    "slint": (0, 0),
    # tokenizers (huggingface/tokenizers, 2026-12-08): 13 texts labelled before they ran (some
    # from the trackers of projects using it), its 0.7-0.23 history: first run 3/3 tuned, 2/2
    # held out, none wrong (eight panics of bindings, dependencies and users' code left alone).
    "tokenizers": (0, 0),
    # typst-lsp (nvarner/typst-lsp, 2026-12-08): 8 texts labelled before they ran, its 0.1-0.13
    # history: one removed expect (three texts), the rest bare unwraps, std's checks and typst's
    # own panic: first run 1/1 tuned, 2/2 held out, none wrong.
    "typst-lsp": (0, 0),
    # env_logger (rust-cli/env_logger, 2026-12-08): 12 texts labelled before they ran (from the
    # trackers of projects using it; half prose about its panic with no panic text), its
    # 0.2-0.11 history: first run 2/3 tuned, 2/2 held out, none wrong; missed, the init expect
    # inside a PyErr's `PanicException('..')` (Python's repr), read since pyo3's exception is
    # also read as repr prints it.
    "env_logger": (0, 0),
    "winit": (0, 0),  # 20 texts (2026-12-06) with its 0.20-0.30 history, labelled before they ran
    "deno": (2, 5),  # 175 more texts (three rounds); its release history places cli/main.rs
}
# False answers a tuned part still gives, by case: each is named, so any other fails the test.
# actix-net's: the message alone, with no location, version or frame, which an older crate of
# another repository (the actix actor crate, whose 0.5/0.6 the prose names) printed word for
# word before actix-rt existed; nothing in the paste tells it from actix-rt's.
# (image's, a message twelve encoders print word for word pasted alone with the prose naming
# `PngEncoder::write_image`, went with the rule that the method a text names picks among the
# sites of one message.)
# cpal's: a title quoting `Sample rate could not be set: Invalid argument`, which old releases'
# expect printed and later ones return as an error; the body shows the error value, no panic.
TUNED_FALSE = {
    "actix-net": {"007_actix-0-6-message-only-mixed-versions.md"},
    "cpal": {"007_sample-rate-arm-question.md"},
}
# False matches allowed on a held-out part: today's count, never raised; every tuned part has 0
# but those TUNED_FALSE names.
# (nushell's two, a removed `missing span contents in file cache` answered with `missing span`,
# went with the rule that a message going on past a record's whole text is another message.)
# (nushell's third-round one, the span message of its removed nu-source crate with the registry
# path wrapped by the terminal, went with two rules: a wrapped old-format path is joined, and a
# crate only named like the project's is not one of its releases.)
HELD_OUT_FALSE: dict[str, int] = {"image": 1}  # the twelve encoders' message, at the caller


def project_triage(project: str) -> Triage:
    """The project's catalog, with its release history when it has one (`history/`)."""
    history = PROJECTS / project / "history"
    paths = [PROJECTS / project / "catalog.jsonl", *([history] if history.is_dir() else [])]
    return Triage(load_catalog(paths))


@pytest.mark.parametrize("project", NAMES)
def test_every_accepted_site_is_in_the_projects_catalog(project: str) -> None:
    # (the catalog the project is scored against: its history's removed sites, when `history/`
    # holds them, are sites of it)
    catalog = project_triage(project).catalog
    sites = {(r.file_path, r.error_message) for r in catalog}
    missing = [
        (case["case"], site)
        for folder in (PROJECTS / project, PROJECTS / project / HELDOUT)
        for case in read_cases(folder)
        for site in case["accept"]
        if (site["file_path"], site["message"]) not in sites
    ]
    assert missing == []


@pytest.mark.parametrize("project", NAMES)
def test_each_case_file_has_one_label_and_a_third_is_held_out(project: str) -> None:
    parts = [PROJECTS / project, PROJECTS / project / HELDOUT]
    labelled = [[case["case"] for case in read_cases(folder)] for folder in parts]
    for folder, names in zip(parts, labelled, strict=True):
        assert sorted(names) == sorted(p.name for p in (folder / "cases").iterdir())
    tuned, held_out = labelled
    assert len(set(tuned + held_out)) == len(tuned) + len(held_out)
    assert len(held_out) == (len(tuned) + len(held_out)) // 3  # every third case by position


@pytest.mark.parametrize("project", NAMES)
def test_project_misses_and_no_false_matches(project: str) -> None:
    results = score(project_triage(project), read_cases(PROJECTS / project))
    found = figures(results)
    print("\n" + found.summary(project))
    print_details(results)
    wrong = set(found.false_matches)
    assert wrong <= TUNED_FALSE.get(project, set()), wrong
    assert len(found.misses) <= MISSES[project][0], found.misses


@pytest.mark.parametrize("project", NAMES)
def test_project_held_out_misses_and_no_false_matches(project: str) -> None:
    found = figures(score(project_triage(project), read_cases(PROJECTS / project / HELDOUT)))
    line = found.summary(f"{project} held out")
    print("\n" + line)
    # Counts only, even on failure: pytest would print the lists (the held-out cases' names).
    false_matches, misses = len(found.false_matches), len(found.misses)
    assert false_matches <= HELD_OUT_FALSE.get(project, 0), line
    assert misses <= MISSES[project][1], line
