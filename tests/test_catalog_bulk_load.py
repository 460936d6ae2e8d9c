"""Large catalogs are read a batch and a field at a time (bot.catalog.loader, model, validate):
the result must be what reading record by record gives, problems and warnings included."""

from __future__ import annotations

import json
import pickle
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import bot.catalog.loader as loader_module
from bot.catalog.loader import CatalogError, load_catalog
from bot.catalog.model import RecordTable, record_from_dict, record_to_dict
from bot.catalog.validate import batch_is_clean, check_record, record_is_clean

BASE = {
    "id": "r0",
    "repo": "o/r",
    "errorMessage": "Can't differentiate avg pool 2d backward.",
    "errorType": "panic",
    "filePath": "crates/burn-autodiff/src/ops/module.rs",
    "lineNumber": 12,
    "githubUrl": "https://github.com/o/r/blob/" + "ab" * 20 + "/crates/x.rs#L12",
    "tags": ["rust", "panic-site"],
    "analyzedSha": "ab" * 20,
}

# Values a field may be given, right or wrong, so both paths meet every kind of problem.
VALUES = [None, "", "  ", "text", "o/r", "a/b/c", 7, True, 1.5, [], ["x"], ["x", 3], {"k": 1}]
# placeholder write-up texts (`TODO: ..`), alone and in a list: the batch check reads them too
VALUES += ["TODO: explain", ["a step", "TODO: another"]]
NAMES = ["id", "repo", "errorMessage", "errorType", "filePath", "lineNumber", "tags",
         "solutions", "analyzedSha", "githubUrl", "documentation", "unknownField",
         "messagePattern"]  # fmt: skip
ODD_VALUES = st.sampled_from(VALUES)
FIELDS = st.sampled_from(NAMES)


def _outcome(paths: list[Path]):
    """What loading gives: every record as a dict with its origin, and the warnings; or the
    problems."""
    try:
        catalog = load_catalog(paths)
    except CatalogError as exc:
        return "errors", sorted(str(p) for p in exc.problems)
    records = sorted(
        (rid, record.origin, json.dumps(record_to_dict(record), sort_keys=True))
        for rid, record in catalog.records.items()
    )
    return records, sorted(str(w) for w in catalog.warnings), sorted(catalog.known_commits())


def _record_by_record(monkeypatch) -> None:
    monkeypatch.setattr(loader_module, "batch_is_clean", lambda documents: False)


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    changes=st.lists(st.tuples(st.integers(0, 39), FIELDS, ODD_VALUES), min_size=0, max_size=6),
    repeat_id=st.booleans(),
    blank_lines=st.booleans(),
)
def test_batches_read_as_record_by_record_does(
    tmp_path_factory, monkeypatch, changes, repeat_id, blank_lines
):
    folder = tmp_path_factory.mktemp("catalog")
    documents = [{**BASE, "id": f"r{n}", "lineNumber": n + 1} for n in range(40)]
    for index, field, value in changes:
        documents[index][field] = value
    if repeat_id:
        documents[30]["id"] = "r3"
    lines = [json.dumps(d) for d in documents]
    if blank_lines:
        lines.insert(10, "   ")
        lines.insert(25, "")
    (folder / "a.jsonl").write_text("\n".join(lines) + "\n")
    (folder / "b.json").write_text(json.dumps({**BASE, "id": "seed", "documentation": "Why."}))
    monkeypatch.setattr(loader_module, "_BATCH_LINES", 16)
    fast = _outcome([folder])
    with monkeypatch.context() as patched:
        _record_by_record(patched)
        slow = _outcome([folder])
    assert fast == slow


def _write_and_compare(folder: Path, documents: list[dict], monkeypatch) -> None:
    (folder / "a.jsonl").write_text("\n".join(json.dumps(d) for d in documents) + "\n")
    fast = _outcome([folder])
    with monkeypatch.context() as patched:
        _record_by_record(patched)
        slow = _outcome([folder])
    assert fast == slow


@pytest.mark.parametrize("field", NAMES)
def test_each_field_and_value_reads_as_record_by_record(tmp_path, monkeypatch, field):
    # Every (field, value) pair in turn, in a batch of otherwise clean records: what the
    # random combinations above may miss.
    monkeypatch.setattr(loader_module, "_BATCH_LINES", 8)
    for number, value in enumerate(VALUES):
        documents = [{**BASE, "id": f"r{n}"} for n in range(8)]
        documents[5][field] = value
        folder = tmp_path / str(number)
        folder.mkdir()
        _write_and_compare(folder, documents, monkeypatch)


def test_the_batch_check_agrees_with_the_record_check():
    clean = [{**BASE, "id": f"r{n}"} for n in range(5)]
    assert batch_is_clean(clean)
    assert all(record_is_clean(d) and check_record(d, "f") == ([], []) for d in clean)
    for field, value in [
        ("tags", ["x", 3]),
        ("lineNumber", "12"),
        ("repo", "a/b/c"),
        ("errorMessage", " "),
        ("unknownField", 1),
        ("messagePattern", "x"),
    ]:
        broken = [*clean[:4], {**clean[4], field: value}]
        assert not batch_is_clean(broken), field
    assert not batch_is_clean([*clean, {**BASE, "id": "x", "documentation": "a"}])  # 2 shapes
    # a placeholder write-up (`TODO: ..`) in one record of a batch that all have the field
    written = [{**d, "documentation": "text", "solutions": ["a step"]} for d in clean]
    assert batch_is_clean(written)
    for field, value in [("documentation", "TODO: explain"), ("solutions", ["ok", "TODO: x"])]:
        broken = [*written[:4], {**written[4], field: value}]
        assert not record_is_clean(broken[4]) and not batch_is_clean(broken), field


def test_a_broken_line_is_named_and_the_lines_before_it_still_checked(tmp_path, monkeypatch):
    monkeypatch.setattr(loader_module, "_BATCH_LINES", 8)
    lines = [json.dumps({**BASE, "id": f"r{n}"}) for n in range(12)]
    lines[9] = json.dumps({**BASE, "id": "r9", "lineNumber": "nine"})
    lines[10] = "{not json"
    path = tmp_path / "a.jsonl"
    path.write_text("\n".join(lines))
    with pytest.raises(CatalogError) as caught:
        load_catalog([path])
    found = [str(p) for p in caught.value.problems]
    assert found == [
        f"{path}:10: record r9: field `lineNumber`: must be a whole number, not text",
        f"{path}:11: the line is not valid JSON: Expecting property name enclosed in double "
        "quotes (column 2)",
    ]


def test_a_record_is_built_from_its_line_when_asked_for(tmp_path):
    path = tmp_path / "a.jsonl"
    path.write_text("\n".join(json.dumps({**BASE, "id": f"r{n}"}) for n in range(3)))
    catalog = load_catalog([path])
    table = catalog.records
    assert isinstance(table, RecordTable)
    assert table._built == {}  # nothing built by loading
    assert table["r1"] == record_from_dict({**BASE, "id": "r1"}, f"{path}:2")
    assert table["r1"].origin == f"{path}:2"
    assert list(table._built) == ["r1"]
    assert list(catalog.sites())[2] == ("r2", BASE["errorMessage"], BASE["filePath"], "o/r")
    assert catalog.known_commits() == {"ab" * 20}


def test_the_table_can_be_edited_and_pickled(tmp_path):
    path = tmp_path / "a.jsonl"
    path.write_text("\n".join(json.dumps({**BASE, "id": f"r{n}"}) for n in range(3)))
    catalog = load_catalog([path])
    table = catalog.records
    changed = table["r0"].with_changes(error_message="Another message", documentation="Why.")
    table["r0"] = changed
    del table["r2"]
    assert list(table) == ["r0", "r1"] and "r2" not in table and len(table) == 2
    assert [s[1] for s in catalog.sites()] == ["Another message", BASE["errorMessage"]]
    assert table.written_up() == ["r0"]
    copy = pickle.loads(pickle.dumps(table))
    assert dict(copy) == dict(table)
    assert copy.written_up() == ["r0"] and copy.commits() == table.commits()


def test_a_repeated_id_in_one_batch_is_named(tmp_path):
    path = tmp_path / "a.jsonl"
    lines = [json.dumps({**BASE, "id": f"r{n % 5}"}) for n in range(6)]
    path.write_text("\n".join(lines))
    with pytest.raises(CatalogError) as caught:
        load_catalog([path])
    assert [str(p) for p in caught.value.problems] == [
        f"{path}:6: record r0: field `id`: the id is used twice: here and in {path}:1"
    ]


def test_a_line_separator_inside_a_message_does_not_cut_its_line(tmp_path):
    # U+2028 may stand raw in a JSON string; `str.splitlines` would cut the line there.
    message = "first part\u2028second part"
    path = tmp_path / "a.jsonl"
    path.write_text(json.dumps({**BASE, "errorMessage": message}, ensure_ascii=False) + "\n")
    catalog = load_catalog([path])
    assert [r.error_message for r in catalog] == [message]


@pytest.mark.parametrize("suffix", [".jsonl", ".json"])
def test_text_that_is_not_utf8_is_refused_with_its_place(tmp_path, suffix):
    good = json.dumps({**BASE}).encode()
    path = tmp_path / f"a{suffix}"
    path.write_bytes(good[:20] + b"\xff" + good[20:])
    with pytest.raises(CatalogError) as caught:
        load_catalog([path])
    assert [str(p) for p in caught.value.problems] == [
        f"{path}: the file is not UTF-8 text (byte 20)"
    ]
    utf16 = tmp_path / f"b{suffix}"
    utf16.write_bytes(good.decode().encode("utf-16"))
    with pytest.raises(CatalogError) as caught:
        load_catalog([utf16])
    assert "not UTF-8 text" in str(caught.value)


def test_json_nested_too_deeply_is_a_problem_not_a_crash(tmp_path):
    deep = "[" * 100_000 + "]" * 100_000
    lines = tmp_path / "a.jsonl"
    lines.write_text(json.dumps(BASE) + "\n" + deep + "\n")
    whole = tmp_path / "b.json"
    whole.write_text(deep)
    for path, where in ((lines, f"{lines}:2"), (whole, str(whole))):
        with pytest.raises(CatalogError) as caught:
            load_catalog([path])
        assert [str(p) for p in caught.value.problems] == [
            f"{where}: the JSON is nested too deeply to be a catalog record"
        ]


def test_a_hostile_history_file_is_skipped_not_a_crash(tmp_path):
    from bot.app import load_history

    path = tmp_path / "history.ndjson"
    path.write_text("[" * 100_000 + "]" * 100_000 + "\n")
    assert load_history([path]) is None
