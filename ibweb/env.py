"""Reading settings from the environment: every name settings read is listed in ``NAMES``."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from django.core.exceptions import ImproperlyConfigured

#: Environment variables the settings read (compose.yaml is checked against this).
NAMES: set[str] = set()

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off", ""}


def text(name: str, default: str | None = None) -> str | None:
    """The variable's value, or ``default`` when unset."""
    NAMES.add(name)
    return os.environ.get(name, default)


def flag(name: str, default: bool) -> bool:
    """A boolean variable (1/0, true/false, yes/no, on/off)."""
    value = text(name)
    if value is None:
        return default
    if value.strip().lower() in _TRUE:
        return True
    if value.strip().lower() in _FALSE:
        return False
    raise ImproperlyConfigured(f"{name}={value!r} is not a boolean (use 1/0, true/false, yes/no, on/off)")


def listing(name: str, default: list[str]) -> list[str]:
    """A comma-separated list."""
    value = text(name)
    return default if value is None else [v.strip() for v in value.split(",") if v.strip()]


def integer(name: str, default: int, minimum: int = 0) -> int:
    """A whole number of at least ``minimum``."""
    value = text(name)
    if value is None:
        return default
    try:
        number = int(value.strip())
    except ValueError:
        raise ImproperlyConfigured(f"{name}={value!r} is not a whole number") from None
    if number < minimum:
        raise ImproperlyConfigured(f"{name}={number} is below {minimum}")
    return number


def directory(name: str, default: Path) -> Path:
    """A directory the server writes to, created (with its parents) when missing and said where on stderr.

    A path that cannot be a directory (a file is there, no permission) stops the start naming the variable.
    """
    path = Path(text(name) or default).expanduser().absolute()
    if path.is_dir():
        return path
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ImproperlyConfigured(f"{name}={str(path)!r}: cannot create the directory: {exc.strerror}") from None
    print(f"ibweb: created {name} directory {path}", file=sys.stderr)
    return path
