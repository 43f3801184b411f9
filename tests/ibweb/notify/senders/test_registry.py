"""The registry of senders: every kind known, a missing module a clear error when used, not at start."""

import sys

import pytest

from ibweb.notify import senders
from ibweb.notify.config import check_channel
from ibweb.notify.senders import ConfigError, UnknownKind, sender


def test_kinds():
    assert set(senders.KINDS) == {"alertmanager", "webhook", "email", "syslog"}
    assert sender("alertmanager").kind == "alertmanager" and sender("webhook").kind == "webhook"
    with pytest.raises(UnknownKind, match="'pager'"):
        sender("pager")


def test_missing_module_is_named(monkeypatch):
    monkeypatch.setitem(senders.KINDS, "email", "ibweb.notify.senders.no_such_email")
    monkeypatch.delitem(senders._LOADED, "email", raising=False)
    with pytest.raises(UnknownKind, match="ibweb.notify.senders.no_such_email is not installed"):
        sender("email")
    assert "ibweb.notify.senders.no_such_email" not in sys.modules
    with pytest.raises(ConfigError) as err:
        check_channel("email", {}, {})
    assert err.value.field == "kind"


def test_secrets_are_kept_apart():
    config, secrets = check_channel("webhook", {"url": "http://h/x", "template": "teams"},
                                    {"secret": "0123456789abcdefgh"})
    assert "secret" not in config and "url" not in config and secrets["url"] == "http://h/x"
    with pytest.raises(ConfigError) as err:
        check_channel("webhook", {"url": "http://h/x"}, {"template": "ibweb"})
    assert err.value.field == "template"
