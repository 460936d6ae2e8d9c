"""A PostgreSQL schema of its own for a test run, on the server TRIAGE_TEST_POSTGRES names.

The development and CI machines run PostgreSQL on 127.0.0.1:5432 with trust auth and a database
`test`. Where it cannot be reached, the tests that need it are skipped with the reason.
"""

from __future__ import annotations

import functools
import os
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from urllib.parse import quote

import pytest

DEFAULT_TEST_POSTGRES = "postgresql://postgres@127.0.0.1:5432/test"


def server_url() -> str:
    return os.environ.get("TRIAGE_TEST_POSTGRES") or DEFAULT_TEST_POSTGRES


def postgres_or_skip() -> str:
    """The server's URL, or skip the test saying why (driver missing, server unreachable)."""
    url = server_url()
    problem = _unreachable(url)
    if problem:
        pytest.skip(
            f"PostgreSQL tests SKIPPED: cannot connect to {url} ({problem}); "
            "start PostgreSQL or set TRIAGE_TEST_POSTGRES to a server the tests may use"
        )
    return url


@functools.cache
def _unreachable(url: str) -> str | None:
    """Why the server cannot be used (asked once per run), or None."""
    try:
        import psycopg
    except ImportError as exc:  # pragma: no cover - psycopg is a dependency
        return f"psycopg is not installed: {exc}"
    try:
        psycopg.connect(url, connect_timeout=3).close()
    except psycopg.Error as exc:
        return (str(exc).strip().splitlines() or ["?"])[0]
    return None


def with_search_path(url: str, schema: str) -> str:
    """The URL whose connections use `schema` (libpq's `options=-c search_path=…`)."""
    joiner = "&" if "?" in url else "?"
    return f"{url}{joiner}options={quote(f'-c search_path={schema}', safe='')}"


@contextmanager
def fresh_schema(url: str, prefix: str = "triage_test") -> Iterator[str]:
    """Create an empty schema, yield a URL that uses it, drop it (and all in it) afterwards."""
    import psycopg

    name = f"{prefix}_{os.getpid()}_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(f'CREATE SCHEMA "{name}"')
    try:
        yield with_search_path(url, name)
    finally:
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute(f'DROP SCHEMA IF EXISTS "{name}" CASCADE')
