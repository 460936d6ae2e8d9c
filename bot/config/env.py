"""What a command needs of the configuration before (or without) the typed settings:
`SettingsError`, `.env` lines, TRIAGE_CATALOG's paths. Kept apart from settings.py so
`triage-bot match` does not import tomllib and the settings' dataclasses (issue 25)."""

from __future__ import annotations

from pathlib import Path


class SettingsError(ValueError):
    """A setting is missing or invalid. `names` lists the settings concerned."""

    def __init__(self, message: str, names: tuple[str, ...] = ()) -> None:
        super().__init__(message)
        self.names = names


def read_env_file(path: str | Path) -> dict[str, str]:
    """Parse a `.env` file: KEY=VALUE lines, `export` allowed, `#` comments, quoted values."""
    out: dict[str, str] = {}
    for number, line in enumerate(Path(path).read_text().splitlines(), 1):
        text = line.strip()
        if not text or text.startswith("#"):
            continue
        if text.startswith("export "):
            text = text[len("export ") :].strip()
        key, sep, value = text.partition("=")
        key = key.strip()
        if not sep or not key.replace("_", "").isalnum():
            raise SettingsError(f"{path}:{number}: expected KEY=VALUE", ())
        value = value.strip()
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
            value = value[1:-1]
        elif " #" in value:
            value = value.split(" #", 1)[0].rstrip()
        out[key] = value
    return out


def catalog_paths(value: str | None) -> tuple[Path, ...]:
    """TRIAGE_CATALOG's paths: catalog folders or files separated by commas (empty: the
    bundled catalog); SettingsError names the first that does not exist."""
    paths = tuple(Path(p.strip()).expanduser() for p in (value or "").split(",") if p.strip())
    for path in paths:
        if not path.exists():
            raise SettingsError(
                f"TRIAGE_CATALOG: {path} does not exist (catalog folders or files separated "
                "by commas; leave unset for the bundled catalog)",
                ("TRIAGE_CATALOG",),
            )
    return paths
