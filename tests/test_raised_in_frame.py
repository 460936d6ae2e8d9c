"""A hook that prints the location alone below an old-style header, a trait method of another
crate implemented on std's type, and a site found from the backtrace's panicking frame when its
message is nearly all placeholders."""

from __future__ import annotations

import pytest
from small_catalog import site_row, triage_of

from bot.app import Triage
from bot.core.extract.paths import crate_from_function
from bot.core.extract.scanner import extract_panics

HOOK_PASTE = """\
```
thread 'main' panicked at 'the cache of {which} is missing'
viewer_core/src/hub.rs:489
stack backtrace:
   8: core::panicking::panic_fmt
```"""


def test_a_location_alone_below_a_quoted_message_is_the_panics_location() -> None:
    (panic,) = extract_panics(HOOK_PASTE)
    assert panic.message == "the cache of {which} is missing"
    assert panic.location is not None
    assert (panic.location.path, panic.location.line) == ("viewer_core/src/hub.rs", 489)


def test_a_message_of_several_lines_closed_by_its_quote_then_the_location() -> None:
    text = (
        "thread 'main' panicked at 'surface lost: Validation Error\n"
        "\n"
        "Caused by:\n"
        "    Parent device is lost'\n"
        "render/src/surface.rs:815\n"
    )
    (panic,) = extract_panics(text)
    assert panic.message.startswith("surface lost: Validation Error")
    assert panic.message.endswith("Parent device is lost")
    assert panic.location is not None and panic.location.line == 815


def test_an_unclosed_message_keeps_no_location_from_below() -> None:
    # The quote never closes before the path: the path is not known to be the location.
    text = "thread 'main' panicked at 'half a message\nviewer_core/src/hub.rs:489\n"
    (panic,) = extract_panics(text)
    assert panic.location is None


@pytest.mark.parametrize(
    ("function", "crate"),
    [
        (
            "<core::result::Result<T,E> as re_log::result_extensions::ResultExt<T,E>>::unwrap_x",
            "re-log",
        ),
        ("<alloc::vec::Vec<T,A> as core::ops::index::Index<I>>::index", "alloc"),
        ("<burn_autodiff::Autodiff<B> as burn_tensor::Backend>::f", "burn-autodiff"),
        ("<&T as core::fmt::Debug>::fmt", "core"),
    ],
)
def test_a_trait_of_another_crate_on_a_std_type_is_that_crates_code(function, crate) -> None:
    assert crate_from_function(function) == crate


PLACEHOLDERS = "{file}:{line} {err}"


@pytest.fixture
def triage(tmp_path) -> Triage:
    rows = [
        site_row("crates/logging/src/result_ext.rs", 67, PLACEHOLDERS),
        site_row("crates/logging/src/result_ext.rs", 90, "{}: {}"),
        site_row("crates/render/src/strips.rs", 12, "strip builder dropped twice"),
    ]
    rows[0]["enclosingFn"] = "unwrap_or_panic_in_debug"
    rows[1]["enclosingFn"] = "warn_on_err"
    return triage_of(tmp_path, rows)


TRACK_CALLER_PASTE = """\
```
thread 'rayon-9' panicked at 'crates/render/src/strips.rs:531 Buffer is full, 65536 elements.'
render/src/strips.rs:531
stack backtrace:
   6: core::panicking::panic_fmt
             at core/src/panicking.rs:72:14
   7: <core::result::Result<T,E> as logging::result_ext::ResultExt<T,E>>::unwrap_or_panic_in_debug
             at logging/src/result_ext.rs:51:21
      <render::strips::StripBuilder as core::ops::drop::Drop>::drop
             at render/src/strips.rs:528:9
```"""


def test_the_panicking_frames_function_brings_its_site_as_a_candidate(triage: Triage) -> None:
    (match,) = triage.analyse(TRACK_CALLER_PASTE).panics
    found = [triage.catalog.records[c.record_id] for c in match.candidates]
    assert [r.error_message for r in found][:1] == [PLACEHOLDERS]
    assert "function" in match.candidates[0].evidence
    # The other format of that file is another function's: not brought by the frame.
    assert "{}: {}" not in [r.error_message for r in found]


def test_without_the_frame_a_format_of_placeholders_is_no_candidate(triage: Triage) -> None:
    text = TRACK_CALLER_PASTE.split("stack backtrace:")[0] + "```"
    (match,) = triage.analyse(text).panics
    messages = [triage.catalog.records[c.record_id].error_message for c in match.candidates]
    assert PLACEHOLDERS not in messages


@pytest.mark.parametrize("inner", ["::{{closure}}", "::{closure#0}", "::{{closure}}::{{closure}}"])
def test_a_closures_frame_is_its_functions(triage: Triage, inner: str) -> None:
    # A site inside a closure (`CURRENT.with(|cell| .. panic!(..))`) panics in a frame named
    # after the closure, under the enclosing function's path: that function is the record's.
    text = TRACK_CALLER_PASTE.replace(
        "ResultExt<T,E>>::unwrap_or_panic_in_debug\n",
        f"ResultExt<T,E>>::unwrap_or_panic_in_debug{inner}\n",
    )
    (match,) = triage.analyse(text).panics
    found = [triage.catalog.records[c.record_id] for c in match.candidates]
    assert [r.error_message for r in found][:1] == [PLACEHOLDERS]
    assert "function" in match.candidates[0].evidence
