"""Loading catalogs: file shapes, combination, and a clear message for each kind of breakage."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bot.catalog.loader import CatalogError, load_catalog
from bot.catalog.model import record_from_dict, record_to_dict
from bot.catalog.patterns import compile_safe

SEEDS = Path(__file__).parent / "fixtures" / "seeds"
MINIMAL = {"id": "r1", "repo": "o/r", "errorMessage": "Can't differentiate avg pool 2d backward."}


def write(path: Path, content) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(content if isinstance(content, str) else json.dumps(content), encoding="utf-8")
    return path


def problems(paths) -> list[str]:
    with pytest.raises(CatalogError) as caught:
        load_catalog(paths)
    return [str(p) for p in caught.value.problems]


def test_wrapped_bare_array_and_jsonl_forms_combine(tmp_path):
    write(tmp_path / "a.json", {"record": MINIMAL, "datasetVersion": "x"})
    write(tmp_path / "b.json", {**MINIMAL, "id": "r2"})
    write(tmp_path / "sub" / "c.json", [{**MINIMAL, "id": "r3"}, {**MINIMAL, "id": "r4"}])
    write(tmp_path / "d.jsonl", "\n".join(json.dumps({**MINIMAL, "id": f"l{i}"}) for i in range(3)))
    write(tmp_path / "README.md", "not a catalog file; folders skip it")
    catalog = load_catalog([tmp_path])
    assert sorted(r.id for r in catalog) == ["l0", "l1", "l2", "r1", "r2", "r3", "r4"]
    assert catalog.get("l1").origin.endswith("d.jsonl:2")


def test_seed_003_round_trips_field_for_field():
    document = json.loads((SEEDS / "003_8c616292047d3ca7.txt").read_text(encoding="utf-8"))
    record = record_from_dict(document["record"])
    assert record_to_dict(record) == document["record"]
    assert list(record_to_dict(record)) == list(document["record"])


def test_minimal_record_with_site_fields_is_valid(tmp_path):
    site = {
        **MINIMAL,
        "filePath": "crates/burn-autodiff/src/ops/module.rs",
        "lineNumber": 1498,
        "githubUrl": "https://github.com/o/r/blob/abc/crates/burn-autodiff/src/ops/module.rs#L1498",
        "analyzedSha": "abc",
    }
    catalog = load_catalog([write(tmp_path / "s.json", site)])
    record = catalog.get("r1")
    assert record.line_number == 1498
    assert not record.has_write_up
    assert record.crate == "burn-autodiff"


def test_unknown_fields_are_kept_and_warned_about(tmp_path):
    catalog = load_catalog([write(tmp_path / "a.json", {**MINIMAL, "newField": [1, 2]})])
    assert catalog.get("r1").extra == {"newField": [1, 2]}
    assert record_to_dict(catalog.get("r1"))["newField"] == [1, 2]
    assert [str(w) for w in catalog.warnings] == [
        f"{tmp_path / 'a.json'}: record r1: field `newField`: "
        "is not a known field; it is kept as is"
    ]


def test_bad_json_names_the_file_and_line(tmp_path):
    path = write(tmp_path / "bad.json", '{\n  "id": "x",\n  "repo": \n}')
    assert problems([path]) == [f"{path}:4: the file is not valid JSON: Expecting value"]


def test_bad_jsonl_line_names_its_line(tmp_path):
    path = write(tmp_path / "bad.jsonl", json.dumps(MINIMAL) + "\n{oops\n")
    (message,) = problems([path])
    assert message.startswith(f"{path}:2: the line is not valid JSON: ")


def test_missing_id(tmp_path):
    path = write(tmp_path / "a.json", {"repo": "o/r", "errorMessage": "boom"})
    assert problems([path]) == [
        f"{path}: field `id`: is missing; every record needs `id`, `repo` and `errorMessage`"
    ]


def test_wrong_types_each_named(tmp_path):
    path = write(
        tmp_path / "a.jsonl",
        json.dumps({**MINIMAL, "lineNumber": "915", "solutions": "use max_pool2d", "tags": [1]}),
    )
    assert problems([path]) == [
        f"{path}:1: record r1: field `lineNumber`: must be a whole number, not text",
        f"{path}:1: record r1: field `solutions`: must be a list of texts, not text",
        f"{path}:1: record r1: field `tags`: must be a list of texts, not a list",
    ]


def test_record_that_is_not_an_object(tmp_path):
    path = write(tmp_path / "a.json", [MINIMAL, "just text"])
    assert problems([path]) == [f"{path}: a record must be a JSON object, not text"]


def test_duplicate_id_names_both_files(tmp_path):
    first = write(tmp_path / "a.json", MINIMAL)
    second = write(tmp_path / "b.json", MINIMAL)
    assert problems([first, second]) == [
        f"{second}: record r1: field `id`: the id is used twice: here and in {first}"
    ]


def test_regex_that_does_not_compile(tmp_path):
    path = write(tmp_path / "a.json", {**MINIMAL, "messagePattern": "Can't (differentiate"})
    (message,) = problems([path])
    assert message.startswith(
        f"{path}: record r1: field `messagePattern`: the pattern is not a valid regular expression"
    )


def test_catastrophic_regex_is_refused(tmp_path):
    path = write(tmp_path / "a.json", {**MINIMAL, "messagePattern": "(a+)+$"})
    assert problems([path]) == [
        f"{path}: record r1: field `messagePattern`: the pattern `(a+)+$` repeats something "
        "that itself repeats (a `+`, `*` or `{n,}` inside another), which can take exponential "
        "time on a long message; rewrite it without a repetition inside a repetition"
    ]


def test_backreference_is_refused(tmp_path):
    path = write(tmp_path / "a.json", {**MINIMAL, "messagePattern": r"(ab)\1"})
    (message,) = problems([path])
    assert "backreferences and lookaround are not allowed" in message


def test_all_problems_reported_at_once(tmp_path):
    write(tmp_path / "a.json", {"repo": "o/r", "errorMessage": "x"})
    write(tmp_path / "b.json", "not json")
    assert len(problems([tmp_path])) == 2


def test_missing_path_and_wrong_suffix(tmp_path):
    txt = write(tmp_path / "a.txt", "{}")
    assert problems([tmp_path / "nope", txt]) == [
        f"{tmp_path / 'nope'}: no such file or folder",
        f"{txt}: a catalog file must end in .json or .jsonl",
    ]


def test_not_utf8(tmp_path):
    path = tmp_path / "a.json"
    path.write_bytes(b'{"id": "\xff"}')
    assert problems([path]) == [f"{path}: the file is not UTF-8 text (byte 8)"]


def test_written_up_record_supersedes_the_bare_site(tmp_path):
    site = {
        "id": "site1",
        "repo": "o/r",
        "errorMessage": "deform_conv2d_backward: unsupported dtype {:?}",
        "filePath": "crates/burn-flex/src/ops/module.rs",
        "lineNumber": 241,
    }
    seed = {**site, "id": "seed1", "lineNumber": 243, "documentation": "It means..."}
    write(tmp_path / "sites.jsonl", json.dumps(site))
    write(tmp_path / "seed.json", seed)
    catalog = load_catalog([tmp_path])
    assert [r.id for r in catalog] == ["seed1"]


def test_hostile_pattern_in_catalog_does_not_slow_matching():
    # A pattern RE2 accepts but a backtracking engine would never finish on: alternation under
    # a star, against a long run of `a`. On RE2 this returns at once.
    regex = compile_safe("(a|aa)*b")
    assert regex.search("a" * 200_000) is None


BROKEN = {
    "bad-json.json": ('{"id": "x",', "the file is not valid JSON"),
    "missing-id.json": ({"repo": "o/r", "errorMessage": "m"}, "field `id`: is missing"),
    "wrong-type.json": ({**MINIMAL, "lineNumber": "12"}, "field `lineNumber`: must be a whole"),
    "bad-regex.json": ({**MINIMAL, "messagePattern": "a("}, "not a valid regular expression"),
    "catastrophic.json": ({**MINIMAL, "messagePattern": "(x+)+y"}, "exponential time"),
}


@pytest.mark.parametrize("name", sorted(BROKEN))
def test_validate_command_names_each_breakage_and_fails(tmp_path, capsys, name):
    from bot.cli import main

    content, expected = BROKEN[name]
    path = write(tmp_path / name, content)
    assert main(["catalog", "validate", str(path)]) == 1
    err = capsys.readouterr().err
    assert str(path) in err and expected in err


def test_validate_command_names_both_files_of_a_duplicate_id(tmp_path, capsys):
    from bot.cli import main

    first, second = write(tmp_path / "a.json", MINIMAL), write(tmp_path / "b.json", MINIMAL)
    assert main(["catalog", "validate", str(first), str(second)]) == 1
    err = capsys.readouterr().err
    assert f"the id is used twice: here and in {first}" in err and str(second) in err
