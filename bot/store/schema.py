"""The store's tables, declared once: each dialect's migration scripts are derived from them.

`MIGRATIONS` lists what each schema version adds (tables with their indexes, columns added to a
table); `scripts("sqlite")` and `scripts("postgres")` spell them in each database's SQL, as
`(version, script)` pairs for `bot.store.sqlite` and `bot.store.postgres` to apply in order.
The columns only the shared PostgreSQL store needs (job leases, the commands' order) are marked
`only="postgres"`; SQLite keeps a command's order in its rowid.

Never change a released migration (an existing database would not end up like a new one):
append a new version instead. tests/test_store_contract.py reads both databases' catalogs
back and compares them, table by table and column by column.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from typing import Literal

Dialect = Literal["sqlite", "postgres"]

# The types a column is declared with, and how each database spells them.
TYPES: dict[str, dict[Dialect, str]] = {
    "text": {"sqlite": "TEXT", "postgres": "TEXT"},
    "int": {"sqlite": "INTEGER", "postgres": "INTEGER"},  # counts, flags, positions, votes
    "bigint": {"sqlite": "INTEGER", "postgres": "BIGINT"},  # issue numbers, GitHub/Discord ids
    "real": {"sqlite": "REAL", "postgres": "DOUBLE PRECISION"},  # times: seconds since 1970
    # a row id the database assigns
    "id": {"sqlite": "INTEGER PRIMARY KEY AUTOINCREMENT", "postgres": "BIGSERIAL PRIMARY KEY"},
    "serial": {"postgres": "BIGSERIAL"},  # a number the database counts up
}


@dataclass(frozen=True, slots=True)
class Column:
    name: str
    type: str  # a key of TYPES
    nullable: bool = False
    default: str | None = None  # an SQL literal both databases read alike
    key: bool = False  # the table's primary key, on its own
    only: Dialect | None = None  # a column one database needs and the other does not

    def sql(self, dialect: Dialect) -> str:
        parts = [self.name, TYPES[self.type][dialect]]
        if not (self.nullable or self.key or self.type in ("id", "serial")):
            parts.append("NOT NULL")
        if self.default is not None:
            parts.append(f"DEFAULT {self.default}")
        if self.key:
            parts.append("PRIMARY KEY")
        return " ".join(parts)


@dataclass(frozen=True, slots=True)
class Index:
    name: str
    columns: tuple[str, ...]
    unique: bool = False
    where: str | None = None  # a partial index: only the rows this condition holds for
    only: Dialect | None = None

    def sql(self, table: str) -> str:
        head = "CREATE UNIQUE INDEX" if self.unique else "CREATE INDEX"
        where = f" WHERE {self.where}" if self.where else ""
        return f"{head} {self.name} ON {table} ({', '.join(self.columns)}){where}"


@dataclass(frozen=True, slots=True)
class Table:
    name: str
    columns: tuple[Column, ...]
    primary_key: tuple[str, ...] = ()  # a key of several columns
    indexes: tuple[Index, ...] = ()

    def sql(self, dialect: Dialect) -> list[str]:
        lines = [c.sql(dialect) for c in self.columns if c.only in (None, dialect)]
        if self.primary_key:
            lines.append(f"PRIMARY KEY ({', '.join(self.primary_key)})")
        body = ",\n    ".join(lines)
        create = f"CREATE TABLE {self.name} (\n    {body}\n)"
        return [create] + [i.sql(self.name) for i in self.indexes if i.only in (None, dialect)]


@dataclass(frozen=True, slots=True)
class Migration:
    version: int
    tables: tuple[Table, ...] = ()
    added: tuple[tuple[str, Column], ...] = ()  # (table, column) added to an existing table

    def statements(self, dialect: Dialect) -> list[str]:
        out = [statement for table in self.tables for statement in table.sql(dialect)]
        out += [
            f"ALTER TABLE {table} ADD COLUMN {column.sql(dialect)}"
            for table, column in self.added
            if column.only in (None, dialect)
        ]
        return out


# a column of each type: `_text("repo")`, `_real("at", nullable=True)`
_text = partial(Column, type="text")
_int = partial(Column, type="int")
_bigint = partial(Column, type="bigint")
_real = partial(Column, type="real")

_ISSUE = (_text("repo"), _bigint("number"))  # an issue: the first columns of its tables
_JSON_LIST = "'[]'"  # an empty JSON list

# The tables are written a few columns a line, in the order of their columns.
# fmt: off
MIGRATIONS: tuple[Migration, ...] = (
    Migration(1, tables=(
        Table("deliveries", (
            _text("delivery_id", key=True), _text("event"), _text("action", nullable=True),
            _real("received_at"), _text("outcome"),
        )),
        Table("jobs", (
            Column("id", "id"), _text("delivery_id", nullable=True), _text("kind"),
            _text("issue_key"), *_ISSUE, _bigint("installation_id", nullable=True),
            _text("payload", default="'{}'"),
            _text("state", default="'queued'"), _int("attempts", default="0"), _real("next_at"),
            _text("last_error", nullable=True),
            _real("received_at"), _real("created_at"), _real("updated_at"),
            # which replica holds a running job, and until when (bot.store.postgres)
            _text("lease_owner", nullable=True, only="postgres"),
            _real("lease_until", nullable=True, only="postgres"),
        ), indexes=(
            Index("jobs_state_next", ("state", "next_at")),
            Index("jobs_issue", ("issue_key", "state", "id")),
            # replicas: the database itself refuses a second running job of an issue
            Index("jobs_one_running_per_issue", ("issue_key",), unique=True,
                  where="state = 'running'", only="postgres"),
        )),
        Table("issue_state", (
            *_ISSUE, _bigint("comment_id", nullable=True),
            _text("labels_added", default=_JSON_LIST), _text("verdict", nullable=True),
            _text("record_ids", default=_JSON_LIST),
            _text("fingerprint", nullable=True), _real("updated_at"),
        ), primary_key=("repo", "number")),
        Table("cursors", (_text("name", key=True), _text("value"), _real("updated_at"))),
        Table("feedback", (
            _text("platform"), _text("subject"), _text("user_id"), _text("record_id"),
            _int("vote"), _real("at"),
        ), primary_key=("platform", "subject", "user_id"),
           indexes=(Index("feedback_record", ("record_id",)),)),
        Table("discord_replies", (
            _bigint("message_id", key=True), _bigint("channel_id"), _bigint("reply_id"),
            _bigint("author_id"), _text("record_ids", default=_JSON_LIST), _real("created_at"),
        )),
        Table("answers", (
            Column("id", "id"), _text("platform"), _text("subject"), _text("verdict"),
            _text("record_ids", default=_JSON_LIST), _text("fingerprint", nullable=True),
            _real("at"),
        ), indexes=(Index("answers_subject", ("platform", "subject")),)),
    )),
    Migration(2, tables=(
        Table("issue_controls", (
            *_ISSUE, _int("ignored", default="0"), _text("override", nullable=True),
            _int("show_why", default="0"), _int("refused", default="0"), _real("updated_at"),
        ), primary_key=("repo", "number")),
        Table("commands", (
            *_ISSUE, _text("key"), _bigint("comment_id", nullable=True),
            _text("author", nullable=True),
            _text("name"), _text("arg", nullable=True), _text("outcome"), _real("at"),
            # the order a replaced command sorts in (SQLite's rowid does it there)
            Column("seq", "serial", only="postgres"),
        ), primary_key=("repo", "number", "key")),
        Table("issue_records", (
            *_ISSUE, _text("record_id"), _int("position", default="0"),
            _text("fingerprint", nullable=True), _real("first_at"), _real("last_at"),
        ), primary_key=("repo", "number", "record_id"),
           indexes=(Index("issue_records_record", ("record_id",)),)),
        Table("issue_open_state", (*_ISSUE, _text("state"), _real("updated_at")),
              primary_key=("repo", "number")),
        Table("uncatalogued", (
            _text("platform"), _text("subject"), _text("repo", nullable=True),
            _bigint("number", nullable=True), _text("norm_message"), _text("crate", default="''"),
            _text("message"), _text("location", nullable=True), _real("first_at"), _real("last_at"),
        ), primary_key=("platform", "subject", "norm_message", "crate"),
           indexes=(Index("uncatalogued_group", ("norm_message", "crate")),)),
    )),
    # how a closed issue was closed: GitHub's state_reason, when, and the fixing pull request
    Migration(3, added=(
        ("issue_open_state", _text("state_reason", nullable=True)),
        ("issue_open_state", _real("closed_at", nullable=True)),
        ("issue_open_state", _bigint("fixed_by", nullable=True)),
    )),
    # Discord writes waiting for Discord (429s, 5xx): sent, retried with backoff until
    # deadline_at, then dropped (bot.discord.outbox)
    Migration(4, tables=(
        Table("discord_outbox", (
            Column("id", "id"), _text("kind"), _bigint("message_id"), _bigint("channel_id"),
            _bigint("author_id"), _text("payload", default="'{}'"), _int("attempts", default="0"),
            _real("next_at"), _real("deadline_at"), _text("last_error", nullable=True),
            _real("created_at"),
        ), indexes=(
            Index("discord_outbox_due", ("next_at",)),
            Index("discord_outbox_message", ("message_id",)),
        )),
    )),
)
# fmt: on


def scripts(dialect: Dialect) -> list[tuple[int, str]]:
    """Each migration as (version, script) in this database's SQL: statements joined by `;`."""
    return [(m.version, ";\n".join(m.statements(dialect)) + ";") for m in MIGRATIONS]


def statements(script: str) -> list[str]:
    """The statements of a migration script (the scripts hold no `;` but between statements)."""
    return [part.strip() for part in script.split(";") if part.strip()]
