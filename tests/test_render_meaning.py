"""What a bare site means and what to try first, from the scan's `check` object, word for word;
and check reports (burn's tensor checks) answered with the operation, values and call site."""

from __future__ import annotations

from pathlib import Path

from bot.app import Triage, load_bundled
from bot.catalog.model import Record, replace
from bot.core.panic import Panic
from bot.render import texts
from bot.render.answer.build import build_answer
from bot.render.answer.meaning import (
    check_report_step,
    check_report_words,
    filled_message,
    first_step,
    meaning_words,
)
from bot.render.github import render_comment
from bot.render.markup import plain

CASES = Path(__file__).parent / "corpus" / "cases"


def site(check: dict, *, fn: str = "forward", error_type: str = "panic", **fields) -> Record:
    return Record(
        id="r",
        repo=fields.pop("repo", "tracel-ai/burn"),
        error_message=fields.pop("message", "Bad input {}"),
        error_type=error_type,
        file_path=fields.pop("file_path", "crates/burn-nn/src/modules/x.rs"),
        enclosing_fn=fn,
        check=check,
        **fields,
    )


def test_each_kind_of_check_gives_its_own_sentence() -> None:
    impl = {"impl": "impl<B: Backend> BatchNorm<B>"}
    said = {
        "if": "Raised by `BatchNorm::forward` when `D < 2`.",
        "assert": "Raised by `BatchNorm::forward` when `D < 2` does not hold.",
        "expect": "Raised by `BatchNorm::forward` when `D < 2` is `None` or an error.",
    }
    for kind, sentence in said.items():
        words = meaning_words(site({"kind": kind, "code": "D < 2", **impl}))
        assert words is not None and plain(words) == sentence
    arm = site({"kind": "arm", "code": "dtype", "pattern": "other", **impl})
    assert plain(meaning_words(arm) or ()) == (
        "Raised by `BatchNorm::forward` when `dtype` is none of the cases its `match` handles."
    )
    todo = site({"impl": "impl FloatTensorOps<Self> for Candle"}, fn="float_erf", error_type="todo")
    assert plain(meaning_words(todo) or ()) == (
        "`<Candle as FloatTensorOps<Self>>::float_erf` is not implemented: it raises `todo!`."
    )
    assert first_step(todo, "") == (
        "`float_erf` is not implemented for `Candle`: run that operation on another backend, "
        "or look for a newer burn-nn that implements it."
    )
    plain_fn = site({}, fn="save", file_path="crates/burn-train/src/checkpoint/file.rs")
    assert plain(meaning_words(plain_fn) or ()) == (
        "Raised by `panic!` in `burn_train::checkpoint::file::save`, in `burn-train`."
    )


def test_first_steps_name_the_check_and_fit_its_kind() -> None:
    config = site(
        {"kind": "if", "code": "self.prob < 0.0 || self.prob > 1.0", "impl": "impl DropoutConfig"},
        fn="init",
    )
    assert first_step(config, "") == (
        "Change the `DropoutConfig` you build so that `self.prob < 0.0 || self.prob > 1.0` is "
        "false."
    )
    env = site({"kind": "expect", "code": 'env::var("OUT_DIR")', "impl": "impl ModelGen"})
    assert first_step(env, "") == (
        "The environment variable `OUT_DIR` is not set where `ModelGen::forward` runs: set it "
        "for the process that runs this code."
    )
    # No check the scan could read: no first step, and the message is never quoted back as one
    # (it only repeats what the reader has just read).
    assert first_step(site({}), "Killing training from user input.") is None
    directive = "there is no reactor running, must be called from a runtime"
    assert first_step(site({}), directive) is None
    # A check the scan read, but nothing a reader can act on without reading the library's
    # code (`Find the call of yours that reaches ...`, `Pass X a V that one of its arms
    # handles`): no step rather than one that sends the reader into the internals.
    for check in (
        {"kind": "assert", "code": "weights.iter().all(|e| e > &0.)"},
        {"kind": "if", "code": "lhs != rhs"},
        {"kind": "expect", "code": "clients.get(device)"},
        {"kind": "arm", "code": "reduction", "pattern": "other"},
        {"kind": "arm", "code": "lhs != rhs", "pattern": "false"},
    ):
        assert first_step(site(check), "") is None, check
    # `true`/`false` arms are cases of a `bool`, not a catch-all binding.
    boolean = site({"kind": "arm", "code": "lhs != rhs", "pattern": "false"})
    assert plain(meaning_words(boolean) or ()) == (
        "Raised by `burn_nn::modules::x::forward` when `lhs != rhs` is `false`."
    )


def test_an_error_variants_text_names_the_variant() -> None:
    # `spawner.spawn_queued().unwrap_or_else(|err| panic!("{}", err))`, one record per variant
    variant = site(
        {"kind": "expect", "code": "spawner.spawn_queued()", "error": "SpawnError::Unregistered"},
        fn="spawner_system",
        file_path="crates/scene/src/spawner.rs",
        message="scene contains the unregistered component `{type_path}`",
    )
    assert plain(meaning_words(variant) or ()) == (
        "Raised by `scene::spawner::spawner_system` when `spawner.spawn_queued()` fails with "
        "`SpawnError::Unregistered`."
    )
    assert first_step(variant, "") is None


def test_a_title_never_shows_a_raw_format_string() -> None:
    record = site({}, message="Should have handle for tensor {id:?}")
    assert filled_message(record, None, False) == "Should have handle for tensor …"


def test_a_tensor_check_names_the_operation_the_values_and_the_users_release() -> None:
    loaded = load_bundled()
    text = (CASES / "078_check-matmul-tensor-op-error.md").read_text(encoding="utf-8")
    answer = build_answer(Triage.of(loaded).analyse(text), loaded.catalog, history=loaded.history)
    section = answer.sections[0]
    # the whole reason, its middle left out to fit a heading: the shapes stay
    assert section.panic_message == (
        "Matmul: The inner dimension of matmul should be the same, … and [512, 10]. Lhs shape "
        "[32, 784], rhs shape [512, 10]."
    )
    # The matmul check is written up (catalog/burn/writeups/): its write-up leads the section;
    # the sentence from the check stands for checks with none.
    assert section.meaning_text and section.meaning_words is None
    assert plain(check_report_words(section.record, section.match.panic) or ()) == (
        "`burn-tensor` checks the arguments of `Matmul` before running it, and rejected yours "
        "for the reason above."
    )
    assert section.call_site is not None
    assert section.call_site.label == "burn-tensor 0.20.1 float.rs:246"
    release = next(r for r in loaded.history.releases if r.version == "0.20.1")
    assert section.call_site.url == (
        f"https://github.com/tracel-ai/burn/blob/{release.commit}/crates/burn-tensor/src/"
        "tensor/api/float.rs#L246"
    )
    body = render_comment(answer)
    assert (
        f"**{texts.CALLED_AT}:** [`burn-tensor 0.20.1 float.rs:246`]({section.call_site.url})"
        in body
    )
    assert "not the catalogued one" not in body
    assert "Raised by `panic!`" not in body


def test_a_check_report_is_read_with_the_prefix_its_builder_declared() -> None:
    """Any project's builder: the operation and the reasons come from the record's declared
    prefix, not from one project's format."""
    prefix = r"Grid check of (?P<operation>\w+) failed:\s*"
    record = site(
        {"kind": "if", "code": "width == 0", "prefix": prefix},
        message="The width must be positive.",
        file_path="src/check.rs",
        repo="acme/grid",
        tags=("raised-at:src/check.rs:9",),
    )
    message = "Grid check of resize failed: 1. The width must be positive. 2. Too many cells."
    panic = Panic.mentioned(message)
    assert plain(check_report_words(record, panic) or ()) == (
        "`grid` checks the arguments of `resize` before running it, and rejected "
        "yours for 2 reasons; the first is above."
    )
    assert check_report_step(record, panic) == (
        "Change the arguments you pass to `resize` so that the check's `width == 0` is false "
        "for them."
    )
    assert filled_message(record, panic, True) == "resize: The width must be positive."
    # Without a declared prefix naming the operation, no report is read.
    plain_record = replace(record, check={"kind": "if", "code": "width == 0"})
    assert check_report_words(plain_record, panic) is None
    assert filled_message(plain_record, panic, True) == message
    # A hand-edited prefix that could run for ever on a crafted paste (a repetition inside a
    # repetition, on `aaaa…` without the colon) is not run at all, even on a paste it fits.
    nested = replace(record, check={"kind": "if", "prefix": r"(?P<operation>(\w+)+): "})
    fitting = Panic.mentioned("resize: The width must be positive.")
    assert check_report_words(nested, fitting) is None


def test_a_tensor_check_of_a_record_without_a_crate_names_its_repository() -> None:
    loaded = load_bundled()
    text = (CASES / "078_check-matmul-tensor-op-error.md").read_text(encoding="utf-8")
    answer = build_answer(Triage.of(loaded).analyse(text), loaded.catalog, history=loaded.history)
    section = answer.sections[0]
    # a file outside `crates/` has no crate folder
    record = replace(section.record, file_path="src/tensor.rs", repo="someone/tensors")
    assert plain(check_report_words(record, section.match.panic) or ()).startswith(
        "`tensors` checks the arguments of `Matmul`"
    )
