"""`triage-bot doctor`: is this installation ready to answer issues, and if not, what to do.

Checks, in order, each printed as one status line, its details, and (when it is not ok) a line
saying what to do:

- settings: every setting parses (each problem named, not only the first), something is
  configured to serve, and the combinations that quietly do less than expected are pointed out;
- config: the TRIAGE_CONFIG label mapping;
- catalog: TRIAGE_CATALOG (or the bundled catalog) loads and validates, and its lint summary;
- store: the SQLite file (or its folder) is writable and its schema migrations are current;
- github (only when a token or App is configured): who the token is or which App, which
  permissions and events, which installations and repositories;
- discord (only when DISCORD_TOKEN is set): the token logs in, and the Message Content intent.

The network checks use the same endpoints as the bot (GITHUB_API_URL; discord.py's API base).
The exit status is 0 when nothing failed (warnings do not fail), 1 otherwise.

One check per module (settings_check.py, config_check.py, catalog_check.py, store_check.py,
github_check.py, discord_check.py), each
asking the code the bot runs (Settings' rules, the label loader, the catalog loader and index,
the store opener's file check) rather than restating it; check.py is what they return.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TextIO

from bot.cli.doctor.catalog_check import check_catalog
from bot.cli.doctor.check import FAIL, SKIP, WARN, Check
from bot.cli.doctor.config_check import check_config
from bot.cli.doctor.discord_check import check_discord
from bot.cli.doctor.github_check import check_github
from bot.cli.doctor.settings_check import check_settings, collect_settings
from bot.cli.doctor.source_check import check_catalog_sources
from bot.cli.doctor.store_check import check_store
from bot.cli.output import add_json_option, print_json
from bot.config.redact import Redactor


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "doctor",
        help="check the settings, catalog, store and GitHub/Discord credentials",
        description="Check that this installation is ready, and say what to do when it is not. "
        "Exit status 0 when every check passed (warnings included), 1 when one failed.",
    )
    parser.add_argument(
        "--env-file",
        metavar="F",
        help="the settings file read under the environment (default: .env, when there is one; "
        "a file named here must exist)",
    )
    parser.add_argument(
        "--repo",
        action="append",
        default=[],
        metavar="OWNER/NAME",
        help="also check that the GitHub identity can reach this repository (repeatable)",
    )
    parser.add_argument(
        "--offline", action="store_true", help="skip the GitHub and Discord checks (no network)"
    )
    add_json_option(parser, "the checks (name, status, summary, details, fix) and `ok`")
    parser.set_defaults(handler=cmd_doctor)


def cmd_doctor(args: argparse.Namespace) -> int:
    checks = run_checks(
        os.environ,
        args.env_file or ".env",
        repos=args.repo,
        offline=args.offline,
        out=None if args.json else sys.stdout,
        env_file_required=args.env_file is not None,
    )
    failed = [c.name for c in checks if c.failed]
    warned = [c.name for c in checks if c.status == WARN]
    if args.json:
        redact = Redactor()  # as print_check: no token-shaped text in the output
        print_json(
            {
                "ok": not failed,
                "checks": [
                    {
                        "name": c.name,
                        "status": c.status,
                        "summary": redact(c.summary),
                        "details": [redact(line) for line in c.details],
                        "fix": redact(c.fix) if c.fix else None,
                    }
                    for c in checks
                ],
            }
        )
        return 1 if failed else 0
    if failed:
        print(f"\n{len(failed)} check(s) failed: {', '.join(failed)}")
        return 1
    note = f" ({len(warned)} with warnings: {', '.join(warned)})" if warned else ""
    print(f"\nall {len([c for c in checks if c.status != SKIP])} checks passed{note}")
    return 0


def run_checks(
    environ: Mapping[str, str],
    env_file: str | Path | None = ".env",
    *,
    repos: Sequence[str] = (),
    offline: bool = False,
    out: TextIO | None = None,
    env_file_required: bool = False,
) -> list[Check]:
    """Run every check, printing each as it completes when `out` is a stream."""
    checks: list[Check] = []

    def run(step: Callable[[], Check]) -> Check:
        try:
            check = step()
        except Exception as exc:  # a check that crashes is a failed check, not a traceback
            name = getattr(step, "check_name", "check")
            check = Check(name, FAIL, f"unexpected error: {type(exc).__name__}: {exc}")
            check.fix = "run again with LOG_LEVEL=DEBUG and report the error"
        checks.append(check)
        if out is not None:
            print_check(check, out)
        return check

    settings, problems = collect_settings(environ, env_file, required=env_file_required)
    run(lambda: check_settings(settings, problems))
    run(lambda: check_config(settings))
    run(lambda: check_catalog(settings))
    run(lambda: check_catalog_sources(settings))
    run(lambda: check_store(settings))
    if offline:
        run(lambda: Check("github", SKIP, "--offline: not checked"))
        run(lambda: Check("discord", SKIP, "--offline: not checked"))
    else:
        run(lambda: check_github(settings, repos))
        run(lambda: check_discord(settings))
    return checks


def print_check(check: Check, out: TextIO) -> None:
    redact = Redactor()  # belt and braces: no token-shaped text reaches the terminal
    print(f"{check.status:<4}  {check.name}: {redact(check.summary)}", file=out)
    for line in check.details:
        print(f"      {redact(line)}", file=out)
    if check.fix and check.status in (FAIL, WARN):
        print(f"      -> {redact(check.fix)}", file=out)
    out.flush()
