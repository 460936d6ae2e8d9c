"""burn's tensor-check reasons (catalog/burn/check_reasons.jsonl, from `catalog scan --config
catalog/burn/scan.toml`): each reason is its own record, answered whole or quoted alone."""

from __future__ import annotations

import json
from pathlib import Path

from bot.app import Triage

CHECK = "crates/burn-tensor/src/tensor/api/check.rs"
REGISTRY = "/home/a/.cargo/registry/src/index.crates.io-1949cf8c6b5b557f"
REASONS = Path(__file__).parent.parent / "catalog" / "burn" / "check_reasons.jsonl"


def _answer(triage: Triage, text: str):
    analysis = triage.analyse(text)
    if not analysis.answered:
        return None
    return triage.catalog.get(analysis.answered[0].best.record_id)


def test_every_reason_is_a_builder_record_raised_by_the_check_macro() -> None:
    records = [json.loads(line) for line in REASONS.read_text().splitlines()]
    assert len(records) >= 70
    for record in records:
        assert record["filePath"] == CHECK
        assert "macro-body" in record["tags"]
        assert f"raised-at:{CHECK}:1485" in record["tags"]
        assert record["messagePattern"].startswith("(?:=== Tensor Operation Error ===")


def test_a_whole_tensor_operation_error_is_answered_with_its_reason(triage: Triage) -> None:
    text = (
        f"thread 'main' panicked at {REGISTRY}/burn-tensor-0.20.1/src/tensor/api/float.rs:246:9:\n"
        "=== Tensor Operation Error ===\n  Operation: 'Matmul'\n  Reason:\n"
        "    1. The inner dimension of matmul should be the same, but got 784 and 512. "
        "Lhs shape [32, 784], rhs shape [512, 10].\n\n"
    )
    record = _answer(triage, text)
    assert record is not None and (record.file_path, record.line_number) == (CHECK, 492)


def test_a_reason_quoted_alone(triage: Triage) -> None:
    text = "Squeezing fails with `Resulting dimensions 0 do not match the required D2 size 1.`"
    record = _answer(triage, text)
    assert record is not None and (record.file_path, record.line_number) == (CHECK, 306)


def test_an_unknown_reason_is_not_answered_with_the_generic_site(triage: Triage) -> None:
    text = (
        f"thread 'main' panicked at {REGISTRY}/burn-tensor-0.20.1/src/tensor/api/float.rs:246:9:\n"
        "=== Tensor Operation Error ===\n  Operation: 'Frobnicate'\n  Reason:\n"
        "    1. Something no release of burn ever said about frobnication.\n\n"
    )
    assert _answer(triage, text) is None
