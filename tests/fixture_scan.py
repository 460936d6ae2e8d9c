"""Fixture crates under tests/fixtures/, scanned as a user scans their project (`triage-bot
catalog scan DIR --repo ... --commit ... [--config scan.toml] --out OUT`), each once per module."""

from __future__ import annotations

import argparse
from collections.abc import Callable, Mapping
from pathlib import Path

import pytest

from bot.app import Triage
from bot.catalog.loader import load_catalog
from bot.cli.scan import register_catalog

FIXTURES = Path(__file__).parent / "fixtures"
NOTE = "note: run with `RUST_BACKTRACE=1` environment variable to display a backtrace"
REGISTRY = "/home/u/.cargo/registry/src/index.crates.io-6f17d22bba15001f"
Scanned = Callable[[str], Triage]


def scan_fixture(name: str, repo: str, sha: str, out: Path) -> Path:
    """The catalog folder `catalog scan --out` writes for tests/fixtures/NAME."""
    crate = FIXTURES / name
    parser = argparse.ArgumentParser()
    catalog = parser.add_subparsers().add_parser("catalog")
    register_catalog(catalog.add_subparsers())
    argv = ["catalog", "scan", str(crate), "--repo", repo, "--commit", sha]
    if (crate / "scan.toml").is_file():
        argv += ["--config", str(crate / "scan.toml")]
    args = parser.parse_args([*argv, "--out", str(out)])
    assert args.handler(args) == 0
    return out


def scanned_fixtures(
    tmp_path_factory: pytest.TempPathFactory, repos: Mapping[str, str], sha: str
) -> Scanned:
    """name -> Triage over that fixture's fresh scan (the folder, as a user points at it)."""
    cache: dict[str, Triage] = {}

    def get(name: str) -> Triage:
        if name not in cache:
            folder = scan_fixture(name, repos[name], sha, tmp_path_factory.mktemp(name))
            cache[name] = Triage(load_catalog([folder]))
        return cache[name]

    return get
