"""Issue 38: the daily digest lists, per fabric, the validation findings new and resolved since the last digest was
sent, rendered for each recipient through the access layer: a tenant's channel never names another tenant's host;
the day's digest moves the baseline, a digest sent now does not."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from fabric_engine.devices.vitals import DeviceReadings
from fabric_engine.scenario import build_emulator
from fabric_engine.validation.pkeys import PKeyTable
from ibweb.live.validation import store
from ibweb.notify import digest, queue
from ibweb.runtime import device_readings
from tests.support.access_fixtures import build, identifiers, leaks, run_engine

from .helpers import channel, rule

pytestmark = pytest.mark.django_db(transaction=True)


def _mismatch(f, host: int) -> list[PKeyTable]:
    """P_Key tables of ``host``'s cable: the host's port holds 0x8001, its switch port does not (an error)."""
    d = int(f.out_link(host, 1))
    sw, sw_port = int(f.dl_dst[d]), int(f.dl_dst_port[d])
    return [PKeyTable(int(f.port_lid[f.port_offset[host]]), None, 1, (0xFFFF, 0x8001), 128),
            PKeyTable(int(f.lid[sw]), None, sw_port, (0xFFFF,), 32)]


def test_the_digest_lists_new_and_resolved_findings_each_recipient_may_see(webhook_receiver):
    shared = build()
    run_engine(shared.fabric)
    row = shared.fabric
    f = build_emulator(row.scenario()).fabric
    g, a = shared.hosts["globex"][0], shared.hosts["acme"][0]
    gname, aname = str(f.node_name[g]), str(f.node_name[a])
    ops = channel("webhook", {"url": webhook_receiver.url.replace("/hook", "/ops")})
    acme = channel("webhook", {"url": webhook_receiver.url.replace("/hook", "/acme")}, name="acme",
                   tenant=shared.tenants["acme"])
    for r in (rule(ops), rule(acme, tenant=shared.tenants["acme"])):
        r.sends = "digest"
        r.save()
    store.forget(row.pk)
    try:
        assert store.refresh(row) is not None  # the baseline: no P_Key table read
        device_readings.write(row.pk, DeviceReadings(pkeys=[*_mismatch(f, g), *_mismatch(f, a)]))
        assert store.refresh(row) is not None
        made = digest.send_digest(datetime.now(tz=UTC))
        assert len(made) == 2
        queue.wait_idle(30)
        body = {x.path: x.json()["notices"][0]["body"] for x in webhook_receiver.received}
        assert " validation since " in body["/ops"] and ": 2 new, 0 resolved" in body["/ops"]
        new_ops = [ln for ln in body["/ops"].splitlines() if ln.startswith("  new ")]
        assert len(new_ops) == 2 and all("error" in ln and "pkey_mismatch" in ln for ln in new_ops)
        assert any(gname in ln for ln in new_ops) and any(aname in ln for ln in new_ops)
        # the tenant's channel: its own host named, the other tenant's relabelled, nothing of it leaks
        assert not leaks(body["/acme"], identifiers(shared, "globex")), leaks(body["/acme"],
                                                                                identifiers(shared, "globex"))
        new_acme = [ln for ln in body["/acme"].splitlines() if ln.startswith("  new ")]
        assert len(new_acme) == 2 and any(aname in ln for ln in new_acme) and f"host-{g}" in body["/acme"]
        # the day's digest is the next one's baseline: nothing new since; the globex cable fixed is resolved
        assert store.since_sent(row.pk) is None
        device_readings.write(row.pk, DeviceReadings(pkeys=_mismatch(f, a)), replace=("pkeys",))
        store.refresh(row)
        webhook_receiver.received.clear()
        assert len(digest.send_digest(rules=[rule(ops, sends="digest")], manual=True)) == 1
        queue.wait_idle(30)
        (text,) = [x.json()["notices"][0]["body"] for x in webhook_receiver.received]
        assert ": 0 new, 1 resolved" in text
        (resolved,) = [ln for ln in text.splitlines() if ln.startswith("  resolved ")]
        assert gname in resolved and "pkey_mismatch" in resolved
        assert store.since_sent(row.pk) is not None  # sent now: the baseline stays
    finally:
        store.forget(row.pk)
        device_readings.forget(row.pk)


def test_a_rule_that_names_other_kinds_or_a_higher_severity_gets_no_finding(webhook_receiver):
    shared = build()
    run_engine(shared.fabric)
    row = shared.fabric
    f = build_emulator(row.scenario()).fabric
    ops = channel("webhook", {"url": webhook_receiver.url.replace("/hook", "/ops")})
    store.forget(row.pk)
    try:
        store.refresh(row)
        device_readings.write(row.pk, DeviceReadings(pkeys=_mismatch(f, shared.hosts["acme"][0])))
        store.refresh(row)
        assert digest.validation_changes([row.pk])[row.pk][0]["new"]

        def sent(**matchers) -> str:
            webhook_receiver.received.clear()
            assert len(digest.send_digest(rules=[rule(ops, sends="digest", **matchers)], manual=True)) == 1
            queue.wait_idle(30)
            (body,) = [x.json()["notices"][0]["body"] for x in webhook_receiver.received]
            return body

        assert "validation since" not in sent(kinds=["link_down"])
        assert "validation since" not in sent(min_severity="critical", kinds=[digest.VALIDATION_KIND], fabrics=["x"])
        body = sent(kinds=[digest.VALIDATION_KIND], min_severity="critical")  # an error finding counts as critical
        assert "validation since" in body and "pkey_mismatch" in body
    finally:
        store.forget(row.pk)
        device_readings.forget(row.pk)
