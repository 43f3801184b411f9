"""The Alertmanager sender against a real Alertmanager (Debian's prometheus-alertmanager, started per test)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from ibweb.notify.senders import ConfigError, sender
from ibweb.notify.senders.base import Notice
from tests.support.notify_servers import alertmanager, wait_for  # noqa: F401 - fixture

LABELS = {"fabric": "lab", "cluster": "dc1", "kind": "link_down", "severity": "critical", "switch": "leaf01",
          "port": "leaf01 port 3", "event_id": "7"}


def notice(state: str = "firing", ends: datetime | None = None, **labels) -> Notice:
    return Notice(key=f"k-{state}", state=state, kind="link_down", severity="critical",
                  summary="lab: leaf01 port 3 down",
                  body="leaf01 port 3 is down", labels={**LABELS, **labels},
                  starts_at=datetime.now(tz=UTC) - timedelta(seconds=30), ends_at=ends,
                  url="http://ibweb.example/fabrics/lab/events/")


def _parse(t: str) -> datetime:
    return datetime.fromisoformat(t.replace("Z", "+00:00"))


def test_firing_then_resolved_reach_alertmanager(alertmanager):  # noqa: F811
    am = sender("alertmanager")
    config = am.check_config({"url": alertmanager.url + "/", "resend_s": 30})
    assert config["url"] == alertmanager.url
    result = am.send([notice()], config)
    assert result.ok, result.detail
    [alert] = wait_for(lambda: alertmanager.alerts(), what="the alert in Alertmanager")
    assert alert["labels"] == {"alertname": "link_down", **LABELS}
    assert alert["annotations"]["description"] == "leaf01 port 3 is down"
    assert alert["status"]["state"] == "active" and alert["generatorURL"].startswith("http://ibweb.example/")
    # valid for four re-send intervals, as Prometheus stamps ValidUntil (rules/alerting.go)
    left = (_parse(alert["endsAt"]) - datetime.now(tz=UTC)).total_seconds()
    assert 100 < left <= 120
    firing = wait_for(lambda: [b for b in alertmanager.notified.bodies() if b["status"] == "firing"],
                      what="Alertmanager's firing notification")
    assert firing[0]["alerts"][0]["labels"]["switch"] == "leaf01"
    cleared = datetime.now(tz=UTC)
    assert am.send([notice("resolved", ends=cleared)], config).ok
    resolved = wait_for(lambda: [b for b in alertmanager.notified.bodies() if b["status"] == "resolved"],
                        what="Alertmanager's resolved notification")
    assert resolved[0]["alerts"][0]["labels"]["port"] == "leaf01 port 3"
    assert abs((_parse(resolved[0]["alerts"][0]["endsAt"]) - cleared).total_seconds()) < 1
    assert not alertmanager.alerts("?active=true&silenced=true&inhibited=true&unprocessed=true")


def test_refused_and_unreachable(alertmanager):  # noqa: F811
    am = sender("alertmanager")
    config = am.check_config({"url": alertmanager.url})
    bad = am.send([notice(**{"bad-label": "x"})], config)  # a label name Alertmanager refuses: for good
    assert not bad.ok and not bad.retry and "400" in bad.detail
    alertmanager.stop()
    down = am.send([notice()], config)
    assert not down.ok and down.retry and "127.0.0.1" in down.detail


@pytest.mark.parametrize(("config", "field"), [({}, "url"), ({"url": "ftp://x"}, "url"),
                                                ({"url": "http://am:9093", "resend_s": 1}, "resend_s"),
                                                ({"url": "http://am:9093", "labels": {"1x": "a"}}, "labels"),
                                                ({"url": "http://am:9093", "colour": "red"}, "colour")])
def test_config_errors_name_the_field(config, field):
    with pytest.raises(ConfigError) as err:
        sender("alertmanager").check_config(config)
    assert err.value.field == field
