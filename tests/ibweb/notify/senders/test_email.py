"""The e-mail channel against a real SMTP server (aiosmtpd): one message per batch with its text and HTML parts,
the Message-ID of its keys and the thread of firing and resolved mails, STARTTLS with AUTH on a self-signed
certificate, implicit TLS, and which failures are retried."""

import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from ibweb.notify.config import ConfigError, check_channel
from ibweb.notify.senders import sender
from ibweb.notify.senders.email import EmailSender
from tests.support.notify_mail_syslog import Mailbox, notice, self_signed_cert, smtp_server
from tests.support.server import free_port

CONFIG = {"recipients": ["noc@example.org", "oncall@example.org"], "from": "ibweb@alerts.example.org",
          "subject_prefix": "[lab]"}


@pytest.fixture
def smtp(settings):
    """The SMTP settings of a plain server on 127.0.0.1 (a test sets the port)."""
    settings.EMAIL_HOST, settings.EMAIL_HOST_USER, settings.EMAIL_HOST_PASSWORD = "127.0.0.1", "", ""
    settings.EMAIL_USE_TLS = settings.EMAIL_USE_SSL = False
    settings.EMAIL_TIMEOUT = 5
    return settings


def test_a_batch_is_one_mail_with_text_and_html(smtp):
    mailbox = Mailbox()
    ports = [notice(f"k{i}", summary=f"leaf01/{i} <-> gpu000{i}/1 is down",
                    labels={"fabric": "demo", "switch": "leaf01", "port": str(i)}) for i in (1, 2, 3)]
    ports[1] = notice("k2", severity="warning", summary="leaf01/2 <b>flapping</b>", labels={"port": "2"})
    with smtp_server(mailbox) as port:
        smtp.EMAIL_PORT = port
        result = EmailSender().send(ports, CONFIG)
    assert result.ok, result.detail
    assert len(mailbox.mails) == 1
    sender, rcpts, mail = mailbox.mails[0]
    assert (sender, rcpts) == ("ibweb@alerts.example.org", CONFIG["recipients"])
    assert mail["Subject"] == "[lab] FIRING critical link_down: leaf01/1 <-> gpu0001/1 is down (+2 more)"
    assert mail["Auto-Submitted"] == "auto-generated"
    text = mail.get_body(("plain",)).get_content()
    page = mail.get_body(("html",)).get_content()
    for n in ports:
        assert n.summary in text and n.url in text
    assert "leaf01/2 &lt;b&gt;flapping&lt;/b&gt;" in page and "<b>flapping" not in page  # escaped
    assert page.count("<tr>") == 4  # a head and a row per notice
    assert mail["Message-ID"] in result.detail


def test_message_id_follows_the_keys_and_resolved_mail_replies_to_the_firing_one(smtp):
    mailbox = Mailbox()
    firing = [notice("a-fire"), notice("b-fire", labels={"fabric": "demo", "switch": "leaf02", "port": "9"})]
    resolved = [notice("a-clear", state="resolved"),
                notice("b-clear", state="resolved", labels={"fabric": "demo", "switch": "leaf02", "port": "9"})]
    with smtp_server(mailbox) as port:
        smtp.EMAIL_PORT = port
        for batch in (firing, firing[::-1], resolved):
            assert EmailSender().send(batch, CONFIG).ok
        assert EmailSender().send(firing, {**CONFIG, "delivery_key": "0123abcd"}).ok  # the queue's key
    (_, _, first), (_, _, again), (_, _, cleared), (_, _, queued) = mailbox.mails
    assert queued["Message-ID"] == "<ibweb.0123abcd@alerts.example.org>"
    assert first["Message-ID"] == again["Message-ID"]  # the same keys: the same message, whatever the order
    assert first["Message-ID"].endswith("@alerts.example.org>")
    assert cleared["Message-ID"] != first["Message-ID"]
    assert "In-Reply-To" not in first
    assert cleared["In-Reply-To"].strip() == first["References"].split()[0]  # (a long header is folded)
    assert cleared["References"].split() == first["References"].split()  # one episode per notice, shared
    assert len(first["References"].split()) == 2
    assert cleared["Subject"].startswith("[lab] RESOLVED ")


def test_starttls_and_auth_with_a_self_signed_certificate(smtp, tmp_path, monkeypatch):
    cert, key = self_signed_cert(tmp_path)
    mailbox = Mailbox(users={"ibweb": "s3cret"})
    with smtp_server(mailbox, tls=(cert, key)) as port:
        smtp.EMAIL_PORT, smtp.EMAIL_USE_TLS = port, True
        smtp.EMAIL_HOST_USER, smtp.EMAIL_HOST_PASSWORD = "ibweb", "s3cret"
        untrusted = EmailSender().send([notice()], CONFIG)  # the system's CAs do not know this certificate
        monkeypatch.setenv("SSL_CERT_FILE", str(cert))  # the site's CA, as OpenSSL reads it
        sent = EmailSender().send([notice()], CONFIG)
        smtp.EMAIL_HOST_PASSWORD = "wrong"
        refused = EmailSender().send([notice()], CONFIG)
        smtp.EMAIL_USE_TLS, smtp.EMAIL_HOST_PASSWORD = False, "s3cret"
        plain = EmailSender().send([notice()], CONFIG)  # the server requires STARTTLS first
    assert (untrusted.ok, untrusted.retry) == (False, False) and "certificate" in untrusted.detail
    assert sent.ok, sent.detail
    assert (mailbox.logins, mailbox.tls) == (["ibweb"], [True])
    assert (refused.ok, refused.retry) == (False, False) and "authentication" in refused.detail
    assert (plain.ok, plain.retry) == (False, False)
    assert len(mailbox.mails) == 1


@pytest.mark.filterwarnings("ignore:Requiring AUTH while not requiring TLS")  # aiosmtpd: SMTPS is TLS
def test_implicit_tls(smtp, tmp_path, monkeypatch):
    cert, key = self_signed_cert(tmp_path)
    monkeypatch.setenv("SSL_CERT_FILE", str(cert))
    mailbox = Mailbox(users={"ibweb": "s3cret"})
    with smtp_server(mailbox, tls=(cert, key), implicit=True) as port:
        smtp.EMAIL_PORT, smtp.EMAIL_USE_SSL = port, True
        smtp.EMAIL_HOST_USER, smtp.EMAIL_HOST_PASSWORD = "ibweb", "s3cret"
        result = EmailSender().send([notice()], CONFIG)
    assert result.ok, result.detail
    assert (mailbox.logins, mailbox.tls) == (["ibweb"], [True])


def test_refused_recipients(smtp):
    mailbox = Mailbox(refuse={"oncall@example.org", "noc@example.org"})
    with smtp_server(mailbox) as port:
        smtp.EMAIL_PORT = port
        none = EmailSender().send([notice()], CONFIG)
        mailbox.refuse = {"oncall@example.org"}
        some = EmailSender().send([notice()], CONFIG)
    assert (none.ok, none.retry) == (False, False) and "550" in none.detail
    assert some.ok and "oncall@example.org: 550" in some.detail  # delivered to the other: not sent again
    assert [rcpts for _, rcpts, _ in mailbox.mails] == [["noc@example.org"]]


def test_server_down_or_silent_is_retried(smtp):
    smtp.EMAIL_PORT = free_port()
    down = EmailSender().send([notice()], CONFIG)
    assert (down.ok, down.retry) == (False, True) and "ConnectionRefusedError" in down.detail
    with socket.socket() as silent:  # accepts connections (the backlog) and never greets
        silent.bind(("127.0.0.1", 0))
        silent.listen(4)
        smtp.EMAIL_PORT, smtp.EMAIL_TIMEOUT = silent.getsockname()[1], 1
        timed_out = EmailSender().send([notice()], CONFIG)
    assert (timed_out.ok, timed_out.retry) == (False, True) and "timed out" in timed_out.detail


@pytest.mark.parametrize(("config", "field"), [({"recipients": []}, "recipients"),
                                               ({"recipients": "not-an-address"}, "recipients"),
                                               ({"recipients": ["a@b.example", 7]}, "recipients"),
                                               ({"recipients": ["a@b.example"], "from": "nobody"}, "from"),
                                               ({"recipients": ["a@b.example"], "subject_prefix": "a\nBcc: x"},
                                                "subject_prefix")])
def test_bad_config_is_not_retried_and_is_refused_when_saved(smtp, config, field):
    result = EmailSender().send([notice()], config)
    assert (result.ok, result.retry) == (False, False) and result.detail.startswith(f"channel config: {field}: ")
    with pytest.raises(ConfigError) as refused:
        check_channel("email", config, {})
    assert refused.value.field == field


def test_the_registry_gives_this_sender_and_checks_its_config():
    assert isinstance(sender("email"), EmailSender)
    config, secrets = check_channel("email", {"recipients": "noc@example.org, oncall@example.org"}, {})
    assert (config, secrets) == ({"recipients": ["noc@example.org", "oncall@example.org"],
                                  "subject_prefix": "[ibweb]"}, {})
    with pytest.raises(ConfigError) as refused:
        check_channel("email", {"recipients": ["a@b.example"], "smtp_host": "mx"}, {})
    assert refused.value.field == "smtp_host"


def test_starttls_and_implicit_tls_together_stop_the_start():
    env = {**os.environ, "IBWEB_SMTP_STARTTLS": "1", "IBWEB_SMTP_SSL": "1"}
    result = subprocess.run([sys.executable, "manage.py", "check"], cwd=Path(__file__).resolve().parents[4],
                            env=env, capture_output=True, text=True)
    assert result.returncode != 0 and "IBWEB_SMTP_STARTTLS and IBWEB_SMTP_SSL are both on" in result.stderr
