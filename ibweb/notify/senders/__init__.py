"""The senders, by channel kind: :func:`sender` gives the one of a kind.

``alertmanager`` and ``webhook`` are here; ``email`` and ``syslog`` are imported when first asked for, so a
missing module is a clear error naming it when a channel of that kind is used or checked, never an import failure
when the server starts.
"""

from __future__ import annotations

import importlib

from .base import ConfigError, Notice, Sender, SendResult

__all__ = ["KINDS", "sender", "Notice", "Sender", "SendResult", "ConfigError", "UnknownKind"]

#: kind -> module that defines ``SENDER`` (an object of the :class:`~.base.Sender` protocol).
KINDS: dict[str, str] = {
    "alertmanager": "ibweb.notify.senders.alertmanager",
    "webhook": "ibweb.notify.senders.webhook",
    "email": "ibweb.notify.senders.email",
    "syslog": "ibweb.notify.senders.syslog",
}
_LOADED: dict[str, Sender] = {}


class UnknownKind(LookupError):
    """No sender for a channel kind (not registered, or its module is missing)."""


def sender(kind: str) -> Sender:
    """The sender of channel ``kind``; :class:`UnknownKind` naming the kind and module when there is none."""
    if kind in _LOADED:
        return _LOADED[kind]
    module_name = KINDS.get(kind)
    if module_name is None:
        raise UnknownKind(f"no channel kind {kind!r}: one of {', '.join(sorted(KINDS))}")
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        if exc.name != module_name:
            raise
        raise UnknownKind(f"channel kind {kind!r}: its sender module {module_name} is not installed") from exc
    found = getattr(module, "SENDER", None)
    if found is None or getattr(found, "kind", None) != kind:
        raise UnknownKind(f"channel kind {kind!r}: {module_name} defines no SENDER of kind {kind!r}")
    _LOADED[kind] = found
    return found
