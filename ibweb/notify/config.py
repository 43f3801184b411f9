"""A channel's configuration checked per kind, its secret fields kept apart (written, never shown)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .senders import ConfigError, UnknownKind, sender

__all__ = ["check_channel", "ConfigError", "secret_fields"]


def secret_fields(kind: str) -> tuple[str, ...]:
    """The configuration fields of ``kind`` that are written but never shown."""
    return tuple(getattr(sender(kind), "secret_fields", ()))


def check_channel(kind: str, config: Mapping[str, Any], secrets: Mapping[str, Any]) -> tuple[dict, dict]:
    """``(config, secrets)`` of a channel of ``kind`` checked by its sender; :class:`ConfigError` naming the field.

    A secret may come in either mapping (``secrets`` wins); the result keeps each in its own.
    """
    try:
        chosen = sender(kind)
    except UnknownKind as exc:
        raise ConfigError("kind", str(exc)) from exc
    if not isinstance(config, Mapping):
        raise ConfigError("config", "an object")
    if not isinstance(secrets, Mapping):
        raise ConfigError("secrets", "an object")
    hidden = tuple(getattr(chosen, "secret_fields", ()))
    stray = sorted(set(secrets) - set(hidden))
    if stray:
        raise ConfigError(stray[0], f"not a secret field of a {kind} channel ({', '.join(hidden) or 'none'})")
    merged = {**config, **secrets}
    check = getattr(chosen, "check_config", None)
    checked = dict(check(merged)) if check is not None else merged
    return ({k: v for k, v in checked.items() if k not in hidden},
            {k: v for k, v in checked.items() if k in hidden})
