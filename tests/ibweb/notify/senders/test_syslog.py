"""The syslog channel against rsyslogd: what it parsed as RFC 5424 (PRI, version, timestamp, hostname, app-name,
procid, msgid, structured data, MSG) over UDP and TCP (octet-counting), the UDP size limit, and the errors."""

import datetime as dt
import os

import pytest

from ibweb.notify.config import ConfigError, check_channel
from ibweb.notify.senders import sender
from ibweb.notify.senders.syslog import FACILITIES, SyslogSender
from tests.support.notify_mail_syslog import notice, parse_structured_data, rsyslog
from tests.support.server import free_port

#: Label values with every character RFC 5424 section 6.3.3 escapes, and a non-ASCII one.
TRICKY = {"fabric": "demo", "switch": 'leaf"01]\\a', "port": "3", "tenant": "équipe ]["}


@pytest.fixture(scope="module")
def receiver(tmp_path_factory):
    with rsyslog(tmp_path_factory.mktemp("rsyslog")) as running:
        yield running


def _config(receiver, transport: str, **extra) -> dict:
    port = receiver.udp_port if transport == "udp" else receiver.tcp_port
    return {"host": "127.0.0.1", "port": port, "transport": transport, "facility": "local3",
            "app_name": "ibweb-test", "hostname": "ibweb01.example", **extra}


def _since(receiver) -> int:
    return len(receiver.out.read_text().splitlines()) if receiver.out.exists() else 0


def _new(receiver, before: int, count: int) -> list[dict]:
    return receiver.received(before + count)[before:]


@pytest.mark.parametrize("transport", ["udp", "tcp"])
def test_rsyslog_parses_each_notice_as_rfc5424(receiver, transport):
    before = _since(receiver)
    firing = notice("k-fire", labels=TRICKY)
    resolved = notice("k-clear", state="resolved", severity="warning", kind="ber", labels=TRICKY)
    result = SyslogSender().send([firing, resolved], _config(receiver, transport, delivery_key="d-0042"))
    assert result.ok, result.detail
    got = _new(receiver, before, 2)
    assert [g["input"] for g in got] == [f"im{transport}"] * 2
    local3 = FACILITIES["local3"]
    assert [int(g["pri"]) for g in got] == [local3 * 8 + 2, local3 * 8 + 5]  # crit; a clearing is a notice
    for g, n in zip(got, (firing, resolved), strict=True):
        assert (g["version"], g["hostname"], g["app_name"], g["procid"], g["msgid"]) == \
            ("1", "ibweb01.example", "ibweb-test", str(os.getpid()), n.kind)
        when = n.ends_at if n.state == "resolved" else n.starts_at
        assert dt.datetime.fromisoformat(g["timestamp"]) == when
        sd = parse_structured_data(g["sd"])
        assert sd["labels@32473"] == TRICKY  # escaped by the sender, unescaped here: the same values
        assert (sd["ibweb@32473"]["key"], sd["ibweb@32473"]["delivery"], sd["ibweb@32473"]["state"]) == \
            (n.key, "d-0042", n.state)
        # MSG: after the BOM, the summary and the body with its line break (octet-counting keeps it in one
        # message over TCP: two notices, two messages)
        assert g["msg"].removeprefix("\ufeff") == f"{n.summary}\n{n.body}"


def test_udp_cuts_msg_to_the_limit_and_tcp_does_not(receiver):
    before = _since(receiver)
    long = notice("k-long", body="é" * 3000)  # 6,000 bytes of body
    assert SyslogSender().send([long], _config(receiver, "udp", max_udp_bytes=1024)).ok
    assert SyslogSender().send([long], _config(receiver, "tcp", max_udp_bytes=1024)).ok
    udp, tcp = sorted(_new(receiver, before, 2), key=lambda g: g["input"] != "imudp")
    assert len(udp["raw"].encode()) <= 1024 < len(tcp["raw"].encode())
    assert parse_structured_data(udp["sd"]) == parse_structured_data(tcp["sd"])  # the header is never cut
    cut, whole = udp["msg"].removeprefix("\ufeff"), tcp["msg"].removeprefix("\ufeff")
    assert whole == f"{long.summary}\n{long.body}" and whole.startswith(cut) and len(cut) > 300


def test_header_over_the_udp_limit_is_refused_for_good(receiver):
    big = notice("k-big", labels={f"label{i}": "x" * 40 for i in range(20)})
    result = SyslogSender().send([big], _config(receiver, "udp", max_udp_bytes=480))
    assert (result.ok, result.retry) == (False, False) and "use TCP" in result.detail


def test_tcp_receiver_down_is_retried():
    result = SyslogSender().send([notice()], {"host": "127.0.0.1", "port": free_port(), "transport": "tcp",
                                              "timeout_s": 2})
    assert (result.ok, result.retry) == (False, True)
    assert "ConnectionRefusedError" in result.detail


@pytest.mark.parametrize(("config", "field"), [
    ({"port": 514}, "host"),
    ({"host": "127.0.0.1", "transport": "tls"}, "transport"),
    ({"host": "127.0.0.1", "port": "514"}, "port"),
    ({"host": "127.0.0.1", "facility": "local9"}, "facility"),
    ({"host": "127.0.0.1", "max_udp_bytes": 100}, "max_udp_bytes"),
    ({"host": "127.0.0.1", "sd_id": "acme corp"}, "sd_id"),
])
def test_bad_config_is_not_retried_and_is_refused_when_saved(config, field):
    result = SyslogSender().send([notice()], config)
    assert (result.ok, result.retry) == (False, False)
    assert result.detail.startswith(f"channel config: {field}: ")
    with pytest.raises(ConfigError) as refused:
        check_channel("syslog", config, {})
    assert refused.value.field == field


def test_the_registry_gives_this_sender_and_checks_its_config():
    assert isinstance(sender("syslog"), SyslogSender)
    config, secrets = check_channel("syslog", {"host": "siem.example", "transport": "tcp", "port": 6514,
                                               "facility": "local4", "hostname": "ibweb01"}, {})
    assert secrets == {} and config == {"host": "siem.example", "port": 6514, "transport": "tcp", "timeout_s": 5.0,
                                        "max_udp_bytes": 2048, "facility": "local4", "app_name": "ibweb",
                                        "sd_id": "32473", "hostname": "ibweb01"}
    for bad, field in (({"host": "h", "colour": "red"}, "colour"), ({"host": "h", "app_name": "my app"}, "app_name")):
        with pytest.raises(ConfigError) as refused:
            check_channel("syslog", bad, {})
        assert refused.value.field == field
