"""A site that left its file and was reworded in the same release (`src/gil.rs` to
`src/lifecycle.rs`, its advice rewritten): a paste of the old release at the old file is
answered with the one site new elsewhere in the crate that opens with the same words; two such
sites leave it unanswered."""

from __future__ import annotations

from pathlib import Path

from fixture_scan import NOTE, REGISTRY
from git_project import tagged_history

from bot.app import Triage
from bot.catalog.loader import load_catalog

OPENING = "The interpreter is not initialized and the `auto-start` feature is off.\\n\\n"
OLD = OPENING + "Consider calling `interp::prepare_threaded_runtime()` before using its APIs."
NEW = OPENING + "Consider calling `Interp::start()` first."
CARGO = '[package]\nname = "interp"\nversion = "0.1.0"\n'


def _site(message: str, function: str, check: str = "ready()") -> str:
    return f'pub fn {function}() {{\n    assert_ne!({check}, 0, "{message}");\n}}\n'


def _catalog(tmp_path: Path, releases: list[dict[str, str | None]]) -> Triage:
    out = tagged_history(tmp_path, "acme/interp", releases, {"Cargo.toml": CARGO})
    # Today's sites and the history (no removed site's own record), as a project loads them.
    live = tmp_path / "live"
    live.mkdir()
    (live / "history.ndjson").write_bytes((out / "history.ndjson").read_bytes())
    return Triage(load_catalog([out / "panic_sites.jsonl", live]))


def _pasted(old_line: int = 2) -> str:
    path = f"{REGISTRY}/interp-0.1.0/src/gil.rs"
    message = OLD.replace("\\n", "\n")
    return (
        f"```\nthread 'main' panicked at {path}:{old_line}:5:\n"
        f"assertion `left != right` failed: {message}\n  left: 0\n right: 0\n{NOTE}\n```\n"
    )


def _answered_file(triage: Triage, text: str) -> str | None:
    answered = triage.analyse(text).answered
    return triage.catalog.get(answered[0].best.record_id).file_path if answered else None


def test_a_site_moved_to_another_file_and_reworded_is_answered_there(tmp_path) -> None:
    triage = _catalog(
        tmp_path,
        [
            {"src/gil.rs": _site(OLD, "acquire"), "src/lib.rs": "pub mod gil;\n"},
            {
                "src/gil.rs": "pub fn ensure() {}\n",
                "src/lifecycle.rs": _site(NEW, "ensure_started"),
                "src/other.rs": _site(
                    "The pool is closed and takes no more work", "submit", "open()"
                ),
                "src/lib.rs": "pub mod gil;\npub mod lifecycle;\npub mod other;\n",
            },
        ],
    )
    assert _answered_file(triage, _pasted()) == "src/lifecycle.rs"


def test_two_sites_new_elsewhere_that_open_alike_leave_it_unanswered(tmp_path) -> None:
    other = NEW.replace("Interp::start()", "Interp::resume()")
    triage = _catalog(
        tmp_path,
        [
            {"src/gil.rs": _site(OLD, "acquire"), "src/lib.rs": "pub mod gil;\n"},
            {
                "src/gil.rs": "pub fn ensure() {}\n",
                "src/lifecycle.rs": _site(NEW, "ensure_started"),
                "src/resume.rs": _site(other, "ensure_resumed", "resumed()"),
                "src/lib.rs": "pub mod gil;\npub mod lifecycle;\npub mod resume;\n",
            },
        ],
    )
    assert _answered_file(triage, _pasted()) is None


DROPPED = "dispatch dropped without returning error"


def test_a_quoted_message_goes_to_the_file_the_text_names_among_its_sites(tmp_path) -> None:
    # One message at a site removed with its file and at two live sites of files added before
    # it left; the text quotes it in its title and names the old file: the later stage that
    # prefers live sites keeps the named one first (its `named` evidence is in the one order).
    out = tagged_history(
        tmp_path,
        "acme/wire",
        [
            {"src/client/conn.rs": _site(DROPPED, "retryable"), "src/lib.rs": "pub mod client;\n"},
            {
                "src/client/conn.rs": _site(DROPPED, "retryable"),
                "src/client/conn/http1.rs": _site(DROPPED, "send"),
                "src/client/conn/http2.rs": _site(DROPPED, "send", "open()"),
            },
            {"src/client/conn.rs": None},
        ],
        {"Cargo.toml": CARGO.replace("interp", "wire")},
    )
    triage = Triage(load_catalog([out]))
    text = f'Title: "{DROPPED}"\n\nIt comes from conn.rs now and then in our service.\n'
    assert _answered_file(triage, text) == "src/client/conn.rs"
    # Without the file named, a live site is answered.
    assert _answered_file(triage, text.replace("conn.rs", "the client")) in {
        "src/client/conn/http1.rs",
        "src/client/conn/http2.rs",
    }
