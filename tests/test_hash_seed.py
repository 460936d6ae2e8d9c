"""The same input and catalog give the same output under any hash seed (issue 47): every
corpus's `match --json` under ten `PYTHONHASHSEED`s, and a catalog where two workspace folders
hold a crate of one name (which folder a pasted registry path means was decided by a set's
order)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from cli_process import console, env_for

SEEDS = ("0", "1", "2", "3", "7", "42", "101", "4096", "65535", "4294967295")
HERE = Path(__file__).resolve().parent


def _with_seed(seed: str, argv: list[str], tmp_path: Path) -> str:
    env = {**env_for(tmp_path), "PYTHONHASHSEED": seed, "TRIAGE_BOT_CACHE_DIR": "off"}
    done = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    return done.stdout


def _under_every_seed(argv: list[str], tmp_path: Path) -> dict[str, str]:
    """`argv`'s output under each seed, as many processes at a time as there are cores."""
    with ThreadPoolExecutor(max_workers=os.cpu_count() or 1) as pool:
        outputs = pool.map(lambda seed: _with_seed(seed, argv, tmp_path), SEEDS)
        return dict(zip(SEEDS, outputs, strict=True))


def test_every_corpus_answers_alike_under_ten_hash_seeds(tmp_path: Path) -> None:
    script = [sys.executable, str(HERE / "hash_seed_digest.py")]
    digests = _under_every_seed(script, tmp_path)
    assert len(set(digests.values())) == 1, digests
    assert int(next(iter(digests.values())).split()[0]) > 1500  # every corpus was read


def test_a_crate_name_two_folders_share_is_one_folder_under_any_seed(tmp_path: Path) -> None:
    message = "the fiber scheduler lost a task it was still polling"
    records = [
        {
            "id": f"00000000000000c{n}",
            "repo": "acme/loom",
            "errorMessage": message,
            "errorType": "panic",
            "filePath": path,
            "lineNumber": 10,
        }
        for n, path in enumerate(
            ("tools/fiber/src/lib.rs", "crates/fiber/src/lib.rs", "fiber/src/lib.rs")
        )
    ]
    catalog = tmp_path / "catalog"
    catalog.mkdir()
    (catalog / "sites.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    registry = "/home/u/.cargo/registry/src/index.crates.io-1949cf8c6b5b557f"
    paste = tmp_path / "paste.md"
    paste.write_text(
        f"thread 'main' panicked at {registry}/fiber-0.3.0/src/lib.rs:10:5:\n{message}\n"
    )
    argv = console("match", "--json", "--catalog", str(catalog), str(paste))
    outputs = _under_every_seed(argv, tmp_path)
    assert len(set(outputs.values())) == 1, {s: o[:300] for s, o in outputs.items()}
    first = json.loads(next(iter(outputs.values())).splitlines()[0])
    assert first["panics"][0]["file"] is not None  # the registry path was placed in a folder
