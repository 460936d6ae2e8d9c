"""The README's own-project route, end to end, on a crate of our own with two tagged releases:
`catalog history`, a write-up in the overlay folder, `catalog validate` and `lint`, `match` of a
paste from the old release and of one from today's code (both answered from the write-up), and
`doctor` passing a catalog-only setup."""

from __future__ import annotations

import json
import re
from pathlib import Path

from cli_process import run_cli
from git_project import git

ROOT = Path(__file__).resolve().parent.parent
MESSAGE = "width {} is larger than the frame allows"
OLD = (
    'pub fn set_width(w: usize) {\n    if w > 100 {\n        panic!("'
    + MESSAGE
    + '", w);\n    }\n}\n'
)
NEW = "// the frame\n\npub struct Frame;\n\n" + OLD


def _crate(root: Path) -> Path:
    crate = root / "crate"
    (crate / "src").mkdir(parents=True)
    git(crate, "init", "-q", "-b", "main")
    for version, source in (("0.1.0", OLD), ("0.2.0", NEW)):
        (crate / "Cargo.toml").write_text(f'[package]\nname = "widgets"\nversion = "{version}"\n')
        (crate / "src" / "lib.rs").write_text(source)
        git(crate, "add", "-A")
        git(crate, "commit", "-q", "-m", f"Release {version}")
        git(crate, "tag", f"v{version}")
    return crate


def test_the_readme_route_works_start_to_finish(tmp_path: Path) -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    route = readme.split("## Your own project, start to finish", 1)[1].split("\n## ", 1)[0]
    assert readme.index("## Your own project") < len("\n".join(readme.splitlines()[:60]))
    assert "catalog history" in route and "writeups/<id>.json" in route

    crate = _crate(tmp_path)
    built = run_cli(
        tmp_path,
        "catalog",
        "history",
        str(crate),
        "--repo",
        "my-org/widgets",
        "--include-head",
        "--out",
        "catalog/",
    )
    assert built.returncode == 0, built.stderr
    [site] = [json.loads(line) for line in (tmp_path / "catalog" / "panic_sites.jsonl").open()]
    assert site["errorMessage"] == MESSAGE

    overlay = tmp_path / "catalog" / "writeups" / f"{site['id']}.json"
    overlay.parent.mkdir()
    overlay.write_text(
        json.dumps(
            {
                "id": site["id"],
                "documentation": "set_width refuses widths over 100: the frame cannot hold them.",
                "solutions": ["Clamp the width to 100 before calling it.", "Use a wider frame."],
                "exampleFix": "// before\nset_width(w);\n// after\nset_width(w.min(100));",
            }
        )
    )
    assert run_cli(tmp_path, "catalog", "validate", "catalog/").returncode == 0
    assert run_cli(tmp_path, "catalog", "lint", "catalog/").returncode == 0

    registry = "/home/u/.cargo/registry/src/index.crates.io-1949cf8c6b5b557f"
    pastes = {
        "old.md": f"{registry}/widgets-0.1.0/src/lib.rs:3:9",  # the line of the first release
        "new.md": "src/lib.rs:7:9",
    }
    for name, where in pastes.items():
        (tmp_path / name).write_text(
            f"thread 'main' panicked at {where}:\nwidth 250 is larger than the frame allows\n"
        )
        done = run_cli(tmp_path, "match", "--catalog", "catalog/", "--json", name)
        assert done.returncode == 0, done.stderr
        [match] = json.loads(done.stdout.splitlines()[0])["matches"]
        assert match["id"] == site["id"] and match["answer"]["source"] == "writeup", name
        assert match["answer"]["first_step"] == "Clamp the width to 100 before calling it."
    doctor = run_cli(tmp_path, "doctor", "--offline", TRIAGE_CATALOG="catalog/")
    assert doctor.returncode == 0, doctor.stdout
    assert "fine for `match`" in doctor.stdout
    assert not re.search(r"PosixPath|Settings\(", doctor.stdout)


def test_seed_records_ride_on_the_history_to_an_old_release(tmp_path: Path) -> None:
    """The README's other way to bring write-ups: records in the seed format (one analysed
    commit each, today's line), given to `catalog history` and to the bot beside its output:
    a paste from the first release is answered with the seed's write-up."""
    crate = _crate(tmp_path)
    head = git(crate, "rev-parse", "HEAD")
    seeds = tmp_path / "seeds"
    seeds.mkdir()
    (seeds / "width.json").write_text(
        json.dumps(
            {
                "id": "widgets-width-too-large",
                "repo": "my-org/widgets",
                "errorMessage": MESSAGE,
                "errorType": "panic",
                "filePath": "src/lib.rs",
                "lineNumber": 7,
                "githubUrl": f"https://github.com/my-org/widgets/blob/{head}/src/lib.rs#L7",
                "analyzedSha": head,
                "documentation": "`set_width` refuses widths past the frame's hundred columns.",
                "solutions": ["Clamp the width to 100 before calling `set_width`."],
                "tags": ["rust"],
            }
        )
    )
    built = run_cli(
        tmp_path,
        *("catalog", "history", str(crate), "--repo", "my-org/widgets", "--include-head"),
        *("--catalog", str(seeds), "--out", str(tmp_path / "catalog")),
    )
    assert built.returncode == 0, built.stderr
    assert "1 write-ups attached" in built.stderr
    both = ("--catalog", str(tmp_path / "catalog"), "--catalog", str(seeds))
    assert (
        run_cli(tmp_path, "catalog", "validate", str(tmp_path / "catalog"), str(seeds)).returncode
        == 0
    )
    paste = tmp_path / "old.txt"
    paste.write_text(
        "thread 'main' panicked at /home/u/.cargo/registry/src/index.crates.io-6f17d22bba15001f/"
        "widgets-0.1.0/src/lib.rs:3:9:\nwidth 500 is larger than the frame allows\n"
    )
    done = run_cli(tmp_path, "match", *both, "--json", str(paste))
    [answer] = json.loads(done.stdout)["matches"]
    assert answer["id"] == "widgets-width-too-large"
    assert answer["answer"]["source"] == "seed"
