"""A project's own panic hook drafted from its `set_hook` code as a `[[hook]]` pattern
(bot/scan/rust/panic_hooks.py), written by `catalog scan` beside the scan and read with it."""

from __future__ import annotations

import re
from pathlib import Path

from fixture_scan import scan_fixture

from bot.app import Triage
from bot.catalog.loader import HOOK_FILE, load_catalog
from bot.core.extract.hooks import HookFormat, read_hook_line
from bot.scan.rust.panic_hooks import derived_hooks

FIXTURE = Path(__file__).parent / "fixtures" / "own_hook"
MANIFEST = '[package]\nname = "journald-lite"\nversion = "0.4.0"\nedition = "2021"\n'


def _patterns(code: str) -> list[str]:
    return [hook.pattern for hook in derived_hooks(code.encode(), "src/main.rs")]


def _read(pattern: str, line: str) -> tuple[str, str | None] | None:
    found = read_hook_line(line, (HookFormat.of(pattern),))
    return (found.message, found.location) if found is not None else None


def test_a_closure_printing_the_place_and_the_payload() -> None:
    code = """
fn main() {
    std::panic::set_hook(Box::new(move |info| {
        let payload = info.payload().downcast_ref::<&str>().unwrap_or(&"?");
        if let Some(loc) = info.location() {
            log::error!(
                "panic at {}:{}:{} - {}\\n{:?}", loc.file(), loc.line(), loc.column(), payload, 7
            );
        }
    }));
}
"""
    [pattern] = _patterns(code)
    line = "2024-01-02 ERROR app > panic at term/src/grid.rs:210:17 - row 9 out of range"
    assert _read(pattern, line) == ("row 9 out of range", "term/src/grid.rs:210:17")
    assert _read(pattern, "we panic at the thought of it") is None


def test_a_place_built_with_format_first_and_the_message_on_the_next_line() -> None:
    # The hook prints `Failure: PATH:LINE`, then the message on its own line: the pattern's
    # message is empty, so the line below is read as a std header's would be.
    code = """
pub fn install() {
    std::panic::set_hook(Box::new(|info: &std::panic::PanicHookInfo<'_>| report(info)));
}

fn report(info: &std::panic::PanicHookInfo<'_>) {
    let message = match info.payload().downcast_ref::<String>() {
        Some(s) => s.clone(),
        None => String::new(),
    };
    let location = match info.location() {
        Some(l) => format!("{}:{}\\n    ", l.file(), l.line()),
        None => String::new(),
    };
    eprintln!("Internal failure!\\n\\nFailure: {location}{message}\\nVersion: {v}", v = 3);
}
"""
    [pattern] = _patterns(code)
    assert re.search(pattern, "Failure: core/src/eval.rs:88").groupdict()["message"] == ""
    # and a paste of it reads the indented line below as the message
    from bot.core.extract.scanner import extract_panics  # why: this test alone

    text = "Internal failure!\n\nFailure: core/src/eval.rs:88\n    unbound name in scope\n"
    [panic] = extract_panics(text, hooks=(HookFormat.of(pattern),))
    assert panic.message == "unbound name in scope"
    assert panic.location is not None and panic.location.path == "core/src/eval.rs"


def test_a_no_std_panic_handler_and_names_given_to_the_parts() -> None:
    code = """
#[panic_handler]
fn on_panic(info: &core::panic::PanicInfo) -> ! {
    let (file, line) = info.location().map(|l| (l.file(), l.line())).unwrap_or(("?", 0));
    log::error!("KERNEL PANIC [{}:{}] {}", file, line, info.message());
    loop {}
}
"""
    [pattern] = _patterns(code)
    line = "[ERROR] KERNEL PANIC [kernel/src/mm/frame.rs:77] frame allocator exhausted"
    assert _read(pattern, line) == ("frame allocator exhausted", "kernel/src/mm/frame.rs:77")


def test_hooks_that_print_no_place_no_message_or_too_little_draft_nothing() -> None:
    place_only = """
fn main() {
    std::panic::set_hook(Box::new(|info| {
        if let Some(l) = info.location() {
            eprintln!("panic occurred in {}:{}:{}", l.file(), l.line(), l.column());
        }
    }));
}
"""
    message_only = """
fn main() {
    std::panic::set_hook(Box::new(|info| {
        let msg = info.payload().downcast_ref::<&str>();
        eprintln!("oops - {:?}", msg);
    }));
}
"""
    bare = """
fn main() {
    std::panic::set_hook(Box::new(|info| {
        let l = info.location().unwrap();
        let msg = info.payload().downcast_ref::<&str>();
        eprintln!("{}:{}: {:?}", l.file(), l.line(), msg);
    }));
}
"""
    assert _patterns(place_only) == _patterns(message_only) == _patterns(bare) == []
    assert _patterns('fn main() { println!("panic at {}:{}", file!(), line!()); }') == []


def test_catalog_scan_writes_the_drafted_hook_and_the_bot_reads_it(tmp_path) -> None:
    out = scan_fixture("own_hook", "acme/journald-lite", "6" * 40, tmp_path / "catalog")
    hooks = (out / HOOK_FILE).read_text(encoding="utf-8")
    assert "# drafted from the panic hook at src/lib.rs:17" in hooks
    paste = (
        "journald-lite crashed in src/lib.rs:6:22 -> the journal file could not be opened: "
        'Os { code: 2, kind: NotFound, message: "No such file or directory" }\n'
    )
    scan_file = next(out.glob("scan-*.jsonl"))
    for catalog in (out, scan_file):  # the folder, or the scan file alone beside its hooks
        triage = Triage(load_catalog([catalog]))
        analysis = triage.analyse(paste)
        [answer] = analysis.answered
        record = triage.catalog.get(answer.best.record_id)
        assert record.error_message == "the journal file could not be opened"
        assert "location" in answer.best.evidence


def test_catalog_history_drafts_the_hook_of_its_newest_release(tmp_path) -> None:
    from git_project import Project, catalog_history  # why: these tests alone build a git project

    hook = (FIXTURE / "src" / "lib.rs").read_text(encoding="utf-8")
    project = Project(tmp_path / "p")
    project.commit("first", {"Cargo.toml": MANIFEST, "src/lib.rs": hook}, tag="v0.1.0")
    out = catalog_history(project, "acme/journald-lite", tmp_path / "catalog")
    hooks = (out / HOOK_FILE).read_text(encoding="utf-8")
    assert "# drafted from the panic hook at src/lib.rs:17" in hooks
    from bot.scan.builders import load_hooks  # why: this test alone

    [pattern] = load_hooks(out / HOOK_FILE)
    line = "journald-lite crashed in src/lib.rs:6:22 -> the journal file could not be opened"
    assert _read(pattern, line) == ("the journal file could not be opened", "src/lib.rs:6:22")
