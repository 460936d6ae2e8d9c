"""Importing records: the rendered seed pages, the JSON seed, and panic-site lists."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bot.catalog.importers import (
    ImportFormatError,
    import_document,
    import_panic_sites,
    parse_page,
)
from bot.catalog.model import record_from_dict, record_to_dict
from bot.catalog.sites import site_id
from bot.catalog.validate import check_record

ROOT = Path(__file__).resolve().parent.parent
SEEDS = ROOT / "tests" / "fixtures" / "seeds"
SEED_000 = SEEDS / "000_65d1119dea9f0583.txt"
SEED_001 = SEEDS / "001_ec90902a0c8c7cf2.txt"
SEED_002 = SEEDS / "002_bf831a28b94664ef.txt"
SEED_003 = SEEDS / "003_8c616292047d3ca7.txt"
BUNDLED = ROOT / "catalog"


def one(path: Path) -> dict:
    records = import_document(path)
    assert len(records) == 1
    return records[0]


def excerpt_lines(path: Path) -> list[str]:
    """The page's source excerpt, cut out by hand: between `Thrown at` and `View on GitHub`."""
    lines = path.read_text(encoding="utf-8").split("\n")
    start = next(i for i, line in enumerate(lines) if line.startswith("Thrown at ")) + 2
    end = next(i for i, line in enumerate(lines) if line.startswith("View on GitHub")) - 1
    return lines[start:end]


# --- seed 000: a mis-filed write-up, unnumbered solutions, defensive patterns ---------------


def test_seed_000_header_footer_and_source():
    r = one(SEED_000)
    assert r["id"] == "5c5da46720dbbf10"
    assert r["repo"] == "tracel-ai/burn"
    assert r["analyzedSha"] == "d16f7ba2ed"
    assert r["analyzedAt"] == "2026-09-05"
    assert r["errorMessage"] == "Can't differentiate deform conv 2d backward."
    assert r["filePath"] == "crates/burn-autodiff/src/ops/module.rs"
    assert r["lineNumber"] == 915
    assert r["errorType"] == "panic"
    assert r["githubUrl"] == (
        "https://github.com/tracel-ai/burn/blob/d16f7ba2ed/"
        "crates/burn-autodiff/src/ops/module.rs#L915"
    )
    code = r["sourceCode"].split("\n")
    assert code == excerpt_lines(SEED_000)
    assert code[0] == "                    weight.primitive,"  # indentation kept
    assert code[-1] == "                self,"
    # The panic line is the 19th of 37: the excerpt covers 897..933.
    assert len(code) == 37
    assert code[915 - r["sourceCodeStart"]].strip() == (
        'panic!("Can\'t differentiate deform conv 2d backward.");'
    )
    assert (r["sourceCodeStart"], r["sourceCodeEnd"]) == (897, 933)


def test_seed_000_write_up_is_imported_as_given():
    r = one(SEED_000)
    # The write-up is about q_to_device / BackendRouter, not the title's error: kept as is.
    assert r["documentation"] == (
        "q_to_device (moving a quantized tensor to another device) is stubbed in "
        "BackendRouter's QTensorOps and panics. Related stubs (q_reshape, etc.) show the whole "
        "router quantized-tensor surface is unimplemented."
    )
    assert r["solutions"] == [
        "Move the tensor while it is still float (float to_device), then quantize on the "
        "target device's concrete backend.",
        "Handle quantized tensors on the concrete backend that supports q_to_device.",
        "Avoid device transfers of quantized tensors under BackendRouter until quantized ops "
        "are routed.",
    ]
    assert r["exampleFix"] == (
        "// before\n"
        "let q = q_tensor.to_device(&gpu_device); // panics on BackendRouter\n"
        "// after\n"
        "let f = ConcreteBackend::dequantize(q_tensor, FloatDType::F32);\n"
        "let f = ConcreteBackend::float_to_device(f, &gpu_device);\n"
        "let q = ConcreteBackend::quantize(f, &scheme, qparams);"
    )
    assert r["handlingStrategy"] == "validation"
    assert r["validationCode"] == (
        "fn q_device_transfer_ok(dtype: &burn_tensor::DType) -> bool {\n"
        "    !matches!(dtype, burn_tensor::DType::QFloat(_)) "
        "// move floats across devices, not quantized\n"
        "}"
    )
    assert r["typeGuard"] == (
        "fn is_quantized(dtype: &burn_tensor::DType) -> bool {\n"
        "    matches!(dtype, burn_tensor::DType::QFloat(_))\n"
        "}"
    )
    assert r["tryCatchPattern"] == (
        "std::panic::catch_unwind(std::panic::AssertUnwindSafe(||\n"
        "    q_tensor.clone().to_device(&device)\n"
        ')).map_err(|_| anyhow::anyhow!("q_to_device is a stub on BackendRouter; '
        'transfer before quantizing"))'
    )
    assert r["preventionTips"] == [
        "Move tensors to the target device while float, then quantize there.",
        "Avoid device transfers of QuantizedTensor under BackendRouter.",
        "Plan device placement before quantization in multi-GPU pipelines.",
        "Add a dtype check before every to_device call in generic code.",
    ]
    assert r["triggerScenarios"] == (
        "Calling q_to_device / Tensor::to_device on a quantized tensor whose backend is "
        "BackendRouter; multi-GPU or CPU/GPU placement changes for quantized tensors under the "
        "router."
    )
    assert r["commonSituations"] == (
        "Moving quantized checkpoints to GPU for inference; device management in code generic "
        "over Backend using the router; quantized tensors crossing device boundaries."
    )
    assert r["relatedErrors"] == []  # the heading is there with no entries


# --- seed 001: numbered solutions, no "What causes" title, run-on example fix ----------------


def test_seed_001_fields():
    r = one(SEED_001)
    assert r["id"] == "d59d5538758c7e08"
    assert r["repo"] == "tracel-ai/burn"
    assert r["analyzedSha"] == "d16f7ba2ed"
    assert r["analyzedAt"] == "2026-09-05"
    assert r["errorMessage"] == "deform_conv2d_backward: unsupported dtype {:?}"
    assert r["filePath"] == "crates/burn-flex/src/ops/module.rs"
    assert r["lineNumber"] == 243
    assert r["errorType"] == "panic"
    assert r["sourceCode"].split("\n") == excerpt_lines(SEED_001)
    # Two `panic!(` lines in the excerpt; the one raising this message is the thrown line.
    code = r["sourceCode"].split("\n")
    assert "deform_conv2d_backward: unsupported dtype" in code[243 - r["sourceCodeStart"]]
    assert r["sourceCodeEnd"] - r["sourceCodeStart"] + 1 == len(code)
    assert r["documentation"].startswith(
        "deform_conv2d_backward mirrors the forward deform_conv2d dispatch: it matches the input"
    )
    assert r["documentation"].endswith(
        "so it typically surfaces inside .backward()/training loops rather than at the original "
        "call site."
    )
    assert r["solutions"] == [
        "Ensure the forward deform_conv2d inputs are float (F32/F16/BF16) so the saved tensors "
        "used in backward keep a supported dtype.",
        "Audit any cast/quantize ops between the forward call and backward() that could "
        "convert saved tensors to integers.",
        "Reproduce by checking dtype of x_grad inputs in a minimal test: run forward, print "
        ".dtype(), then backward.",
        "If a non-float dtype must be supported, extend the match arms in "
        "crates/burn-flex/src/ops/module.rs deform_conv2d_backward.",
    ]
    fix = r["exampleFix"]
    assert fix.startswith("// before\nlet grads = loss.backward(); // x saved as I8")
    # No headings split it: the validation, type-guard and catch_unwind code stays in the fix.
    assert "assert!(matches!(x_saved.dtype()" in fix
    assert "fn backward_safe(t: &Tensor<Flex>) -> bool {" in fix
    assert fix.endswith(
        "deform_conv2d(x, offset, mask, w, b, opts); /* rebuild graph */ loss.backward()\n    });"
    )
    assert "\n\n// after\n" in fix  # blank lines inside the block are kept
    for absent in ("handlingStrategy", "validationCode", "typeGuard", "tryCatchPattern"):
        assert absent not in r
    assert "preventionTips" not in r
    assert r["triggerScenarios"].startswith("Running backward on a deform_conv2d node where")
    assert r["triggerScenarios"].endswith("dtype of x changed between forward and backward.")
    assert r["commonSituations"].startswith("Training Deformable DETR / DCN models with")
    assert r["relatedErrors"] == [
        "conv1d: unsupported dtype {:?}",
        "conv2d: unsupported dtype {:?}",
        "deform_conv2d: unsupported dtype {:?}",
        "conv3d: unsupported dtype {:?}",
        "adaptive_avg_pool2d_backward: unsupported dtype {:?}",
    ]


# --- seed 002: truncated related error ------------------------------------------------------


def test_seed_002_fields():
    r = one(SEED_002)
    assert r["id"] == "8d1d2fa6df3880bd"
    assert r["repo"] == "tracel-ai/burn"
    assert r["analyzedSha"] == "d16f7ba2ed"
    assert r["errorMessage"] == "Can't differentiate avg pool 2d backward."
    assert (r["filePath"], r["lineNumber"]) == ("crates/burn-autodiff/src/ops/module.rs", 1498)
    assert (r["sourceCodeStart"], r["sourceCodeEnd"]) == (1480, 1516)
    assert r["sourceCode"].split("\n") == excerpt_lines(SEED_002)
    assert r["documentation"] == (
        "The autodiff backend does not implement the backward pass of avg_pool2d. Its module "
        "ops module implements only the forward pass; calling the backward entry point hits an "
        "unconditional panic because no gradient rule exists for this op on this backend "
        "combination."
    )
    assert r["solutions"] == [
        "Use max_pool2d instead of avg_pool2d for pooling in layers that need gradients on "
        "this backend",
        "Enable/upgrade the inner backend (e.g. burn-tch or burn-candle) so it supplies its own "
        "avg_pool2d backward",
        "Downsample via strided conv2d or reshape+mean reduction composed of ops the autodiff "
        "backend supports",
        "Implement avg_pool2d_backward for your backend by delegating to its primitives",
    ]
    assert r["exampleFix"] == (
        "// before\n"
        "let pooled = pool::avg_pool2d(&x, [2, 2], [2, 2], [0, 0], true, false);\n"
        "// after\n"
        "let pooled = pool::max_pool2d(&x, [2, 2], [2, 2], [0, 0], false);\n"
        "\n"
        "// Before training, verify pooling layers use ops with backward support on autodiff\n"
        "if uses_avg_pool2d(&model_config) {\n"
        '    eprintln!("avg_pool2d backward is unimplemented in burn-autodiff; use max_pool2d '
        'or strided conv");\n'
        "}"
    )
    assert r["triggerScenarios"].startswith(
        "Calling burn_autodiff::module::avg_pool2d_backward directly, or a code path"
    )
    assert r["commonSituations"].endswith(
        "hand-rolling backward passes against the module ops API."
    )
    assert r["relatedErrors"] == [
        "Can't differentiate max pool2d with indices backward.",
        "Can't differentiate adaptive avg pool2d backward.",
        "Can't differentiate adaptive avg pool3d backward.",
        "Can't differentiate interpolate backward.",
        'unimplemented!("float_scatter with {other:?} update is not i',  # cut off on the page
    ]


def test_pages_state_nothing_they_do_not_show():
    for path in (SEED_000, SEED_001, SEED_002):
        r = one(path)
        for unsaid in ("slug", "tags", "severity", "messagePattern", "contentChangedAt"):
            assert unsaid not in r, (path.name, unsaid)
        text = path.read_text(encoding="utf-8")
        assert r["analyzedSha"] in text and len(r["analyzedSha"]) == 10
        for key in ("documentation", "triggerScenarios", "commonSituations", "errorMessage"):
            if key in r:
                assert r[key] in text.replace("\n", " ") or r[key] in text, key
        for item in r.get("solutions", []) + r.get("relatedErrors", []):
            assert item in text
        problems, _ = check_record(r, path.name)
        assert problems == []


def test_page_round_trips_through_the_model():
    for path in (SEED_000, SEED_001, SEED_002):
        r = one(path)
        assert record_to_dict(record_from_dict(r)) == r
        assert list(record_to_dict(record_from_dict(r))) == list(r)  # canonical order


# --- seed 003: JSON, wrapped ----------------------------------------------------------------


def test_seed_003_round_trip_field_for_field():
    original = json.loads(SEED_003.read_text(encoding="utf-8"))["record"]
    imported = one(SEED_003)
    assert imported == original
    written = record_to_dict(record_from_dict(imported))
    assert written == original
    assert list(written) == list(original)
    # nulls survive the trip as nulls
    assert written["typeGuard"] is None and written["errorCode"] is None
    assert "datasetVersion" not in written


def test_json_forms_bare_array_and_wrapped(tmp_path):
    original = json.loads(SEED_003.read_text(encoding="utf-8"))["record"]
    bare = tmp_path / "bare.json"
    bare.write_text(json.dumps(original), encoding="utf-8")
    assert import_document(bare) == [original]
    other = dict(original, id="another")
    array = tmp_path / "array.json"
    array.write_text(json.dumps([{"record": original}, other]), encoding="utf-8")
    assert [r["id"] for r in import_document(array)] == ["cf30438606d06d30", "another"]
    bad = tmp_path / "bad.json"
    bad.write_text('{"record": {"id": "x",', encoding="utf-8")
    with pytest.raises(ImportFormatError, match="not valid JSON"):
        import_document(bad)
    no_id = tmp_path / "noid.json"
    no_id.write_text('{"repo": "a/b"}', encoding="utf-8")
    with pytest.raises(ImportFormatError, match="no `id`"):
        import_document(no_id)


def test_json_lines_of_records(tmp_path):
    bundled = (BUNDLED / "burn" / "panic_sites.jsonl").read_text(encoding="utf-8")
    path = tmp_path / "few.jsonl"
    path.write_text("\n".join(bundled.splitlines()[:3]) + "\n\n", encoding="utf-8")
    records = import_document(path)
    assert records == [json.loads(line) for line in bundled.splitlines()[:3]]
    path.write_text(bundled.splitlines()[0] + "\n{oops\n", encoding="utf-8")
    with pytest.raises(ImportFormatError, match=r"few\.jsonl:2: the line is not valid JSON"):
        import_document(path)


# --- page edge cases ------------------------------------------------------------------------


def test_page_without_footer_is_refused():
    text = SEED_002.read_text(encoding="utf-8")
    cut = text[: text.index("AI-assisted analysis")]
    with pytest.raises(ImportFormatError, match="footer"):
        parse_page(cut, "cut.txt")


def test_excerpt_lines_are_left_out_when_the_thrown_line_is_ambiguous():
    text = SEED_002.read_text(encoding="utf-8")
    panic = '        panic!("Can\'t differentiate avg pool 2d backward.");\n'
    doubled = text.replace(panic, panic + panic, 1)
    r = parse_page(doubled, "doubled.txt")
    assert r["lineNumber"] == 1498
    assert "sourceCodeStart" not in r and "sourceCodeEnd" not in r
    assert "errorType" not in r  # no single line shows how it is raised
    # The link needs only the thrown line, which the page states.
    assert r["githubUrl"].endswith("/blob/d16f7ba2ed/crates/burn-autodiff/src/ops/module.rs#L1498")


def test_message_on_the_line_below_the_macro_is_not_an_anchor():
    text = SEED_002.read_text(encoding="utf-8")
    one_line = '        panic!("Can\'t differentiate avg pool 2d backward.");'
    two_lines = (
        '        panic!(\n            "Can\'t differentiate avg pool 2d backward."\n        );'
    )
    r = parse_page(text.replace(one_line, two_lines), "split.txt")
    assert "sourceCodeStart" not in r


def test_error_type_follows_the_call_on_the_thrown_line():
    text = SEED_002.read_text(encoding="utf-8")
    line = '        panic!("Can\'t differentiate avg pool 2d backward.");'
    expect = '        x.expect("Can\'t differentiate avg pool 2d backward.");'
    assert parse_page(text.replace(line, expect), "e.txt")["errorType"] == "expect"
    fmt = '        let m = format!("Can\'t differentiate avg pool 2d backward.");'
    r = parse_page(text.replace(line, fmt), "f.txt")
    assert "errorType" not in r  # a line that only formats the text says nothing of how
    assert r["sourceCodeStart"] == 1480


def test_crlf_pages_read_the_same():
    text = SEED_001.read_text(encoding="utf-8")
    assert parse_page(text.replace("\n", "\r\n"), "crlf") == parse_page(text, "lf")


def test_title_and_footer_must_agree():
    text = SEED_001.read_text(encoding="utf-8").replace(
        "tracel-ai/burn · error", "other/repo · error"
    )
    with pytest.raises(ImportFormatError, match="other/repo"):
        parse_page(text, "x.txt")


# --- panic sites ----------------------------------------------------------------------------

COMMIT = "2c06be351006851d42fdb6df16b976f4a82d9747"


def write_sites(path: Path, rows: list[dict]) -> None:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")


def site(n: int, file: str, line: int, message: str, kind: str = "panic!") -> dict:
    return {
        "id": f"burn-{n:05d}",
        "file_path": file,
        "line": line,
        "kind": kind,
        "message_format": message,
        "commit": COMMIT,
    }


def test_panic_sites_become_skeletons(tmp_path):
    rows = [
        site(0, "crates/burn-tensor/src/a.rs", 30, "Should be Float primitive kind", ".expect"),
        site(1, "crates/burn-tensor/src/a.rs", 10, "Should be Float primitive kind", ".expect"),
        site(2, "crates/burn-tensor/src/a.rs", 20, "Should be Float primitive kind", ".expect"),
        site(3, "crates/burn-core/src/b.rs", 5, "Should be Float primitive kind", ".expect"),
        site(4, "src/top.rs", 7, "dim {} out of bounds", "assert!"),
    ]
    path = tmp_path / "sites.jsonl"
    write_sites(path, rows)
    repo = "tracel-ai/burn"
    records = import_panic_sites(path, repo)
    assert len(records) == 5
    msg = "Should be Float primitive kind"
    # Same file and message: numbered by line (10 -> 0, 20 -> 1, 30 -> 2), whatever the order.
    assert records[1]["id"] == site_id(repo, "crates/burn-tensor/src/a.rs", msg, 0)
    assert records[2]["id"] == site_id(repo, "crates/burn-tensor/src/a.rs", msg, 1)
    assert records[0]["id"] == site_id(repo, "crates/burn-tensor/src/a.rs", msg, 2)
    # Another file restarts the count.
    assert records[3]["id"] == site_id(repo, "crates/burn-core/src/b.rs", msg, 0)
    assert len({r["id"] for r in records}) == 5
    first = records[1]
    assert first == {
        "id": first["id"],
        "repo": repo,
        "errorMessage": msg,
        "errorType": "expect",
        "filePath": "crates/burn-tensor/src/a.rs",
        "lineNumber": 10,
        "githubUrl": f"https://github.com/{repo}/blob/{COMMIT}/crates/burn-tensor/src/a.rs#L10",
        "tags": ["rust", "panic-site", "crate:burn-tensor"],
        "analyzedSha": COMMIT,
    }
    assert records[4]["errorType"] == "assert"
    assert records[4]["tags"] == ["rust", "panic-site"]  # no crate folder, no crate tag
    for r in records:
        assert check_record(r, "sites.jsonl") == ([], [])


def test_panic_site_ids_are_stable(tmp_path):
    rows = [site(0, "crates/x/src/a.rs", 10, "boom {}"), site(1, "crates/x/src/b.rs", 3, "bang")]
    a = tmp_path / "a.jsonl"
    write_sites(a, rows)
    moved = [dict(rows[0], line=99, id="burn-00777"), rows[1]]
    b = tmp_path / "b.jsonl"
    write_sites(b, list(reversed(moved)))
    before = {r["filePath"]: r["id"] for r in import_panic_sites(a, "o/r")}
    after = {r["filePath"]: r["id"] for r in import_panic_sites(b, "o/r")}
    assert before == after  # moving a site or renumbering the list keeps its id
    other_repo = import_panic_sites(a, repo="someone/else")
    assert {r["id"] for r in other_repo}.isdisjoint(before.values())
    assert all(r["repo"] == "someone/else" for r in other_repo)


def test_panic_site_errors_name_the_line(tmp_path):
    path = tmp_path / "bad.jsonl"
    path.write_text(
        json.dumps(site(0, "a.rs", 1, "x")) + "\n" + '{"file_path": "a.rs", "line": "7"}\n',
        encoding="utf-8",
    )
    with pytest.raises(ImportFormatError, match=r"bad\.jsonl:2: `line` must be a whole number"):
        import_panic_sites(path, "o/r")


# --- the bundled catalog is what the importer makes -----------------------------------------


def test_bundled_seed_files_match_a_fresh_import():
    for path in (SEED_000, SEED_001, SEED_002, SEED_003):
        record = one(path)
        bundled = BUNDLED / "seeds" / f"{record['id']}.json"
        text = bundled.read_text(encoding="utf-8")
        assert json.loads(text) == record_to_dict(record_from_dict(record))
        assert text.endswith("}\n") and text.startswith("{\n  ")
    assert len(list((BUNDLED / "seeds").glob("*.json"))) == 4


def test_bundled_panic_sites():
    lines = (BUNDLED / "burn" / "panic_sites.jsonl").read_text(encoding="utf-8").splitlines()
    records = [json.loads(line) for line in lines]
    assert len(records) == 1407  # burn's runtime sites at HEAD (removed ones: removed_sites)
    ids = [r["id"] for r in records]
    assert len(set(ids)) == len(ids)
    for r in records:
        assert r["repo"] == "tracel-ai/burn"
        assert r["analyzedSha"] == COMMIT
        assert r["githubUrl"] == (
            f"https://github.com/tracel-ai/burn/blob/{COMMIT}/{r['filePath']}#L{r['lineNumber']}"
        )
        assert "panic-site" in r["tags"]
    # The same message 55 times in one file still gives 55 ids, numbered by line.
    float_kind = sorted(
        (r["lineNumber"], r["id"])
        for r in records
        if r["filePath"] == "crates/burn-tensor/src/bridge/ops/float.rs"
        and r["errorMessage"] == "Should be Float primitive kind"
    )
    assert len(float_kind) == 55
    for occurrence, (_line, rid) in enumerate(float_kind):
        assert rid == site_id(
            "tracel-ai/burn",
            "crates/burn-tensor/src/bridge/ops/float.rs",
            "Should be Float primitive kind",
            occurrence,
        )
