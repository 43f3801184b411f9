"""Real receivers for the e-mail and syslog channels' tests: an SMTP server (aiosmtpd) with STARTTLS and AUTH when
asked, a self-signed certificate for it (cryptography), and rsyslogd (Debian ``rsyslog``) in the foreground with
a temporary config, writing each message it parsed as RFC 5424 to a file as JSON (its own property names)."""

from __future__ import annotations

import datetime as dt
import ipaddress
import json
import shutil
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from email import message_from_bytes, policy
from email.message import EmailMessage
from pathlib import Path

from aiosmtpd.controller import Controller
from aiosmtpd.smtp import AuthResult, LoginPassword
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from ibweb.notify.senders.base import Notice
from tests.support.processes import stop_process
from tests.support.server import free_port

RSYSLOGD = shutil.which("rsyslogd") or "/usr/sbin/rsyslogd"


def notice(key: str = "n1", state: str = "firing", **fields) -> Notice:
    """A notice of a link down on ``leaf01`` port 3 (fields override)."""
    start = dt.datetime(2026, 12, 6, 18, 0, 0, 250000, tzinfo=dt.UTC)
    values = {"kind": "link_down", "severity": "critical", "summary": "leaf01/3 <-> gpu0007/1 is down",
              "body": "The link went down at 18:00:00.\nJobs on gpu0007 lost their rail.",
              "labels": {"fabric": "demo", "cluster": "c1", "kind": "link_down", "severity": "critical",
                         "switch": "leaf01", "port": "3"},
              "starts_at": start, "ends_at": start + dt.timedelta(minutes=5) if state == "resolved" else None,
              "url": "https://ibweb.example/fabrics/demo/ports/leaf01/3"}
    return Notice(key=key, state=state, **{**values, **fields})


def self_signed_cert(folder: Path) -> tuple[Path, Path]:
    """A certificate for ``localhost`` and 127.0.0.1 signed by its own key; ``(cert.pem, key.pem)``."""
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "localhost")])
    now = dt.datetime.now(dt.UTC)
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
            .serial_number(x509.random_serial_number()).not_valid_before(now - dt.timedelta(minutes=5))
            .not_valid_after(now + dt.timedelta(days=1))
            .add_extension(x509.SubjectAlternativeName([x509.DNSName("localhost"),
                                                        x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
                           critical=False)
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
            .sign(key, hashes.SHA256()))
    cert_path, key_path = folder / "smtp-cert.pem", folder / "smtp-key.pem"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                           serialization.NoEncryption()))
    return cert_path, key_path


@dataclass
class Mailbox:
    """What the SMTP server accepted: one ``(envelope sender, recipients, parsed message)`` per DATA."""

    refuse: set[str] = field(default_factory=set)  #: recipients answered 550
    users: dict[str, str] = field(default_factory=dict)  #: login -> password accepted by AUTH
    mails: list[tuple[str, list[str], EmailMessage]] = field(default_factory=list)
    logins: list[str] = field(default_factory=list)
    tls: list[bool] = field(default_factory=list)  #: whether each DATA came over TLS

    async def handle_RCPT(self, server, session, envelope, address, rcpt_options):  # noqa: N802 (aiosmtpd's name)
        if address in self.refuse:
            return "550 5.1.1 no such mailbox"
        envelope.rcpt_tos.append(address)
        return "250 OK"

    async def handle_DATA(self, server, session, envelope):  # noqa: N802
        parsed = message_from_bytes(envelope.content, policy=policy.default)
        self.mails.append((envelope.mail_from, list(envelope.rcpt_tos), parsed))
        self.tls.append(server.transport.get_extra_info("ssl_object") is not None)
        return "250 OK"

    def authenticate(self, server, session, envelope, mechanism, auth_data) -> AuthResult:
        if isinstance(auth_data, LoginPassword) and self.users.get(auth_data.login.decode()) == \
                auth_data.password.decode():
            self.logins.append(auth_data.login.decode())
            return AuthResult(success=True)
        return AuthResult(success=False, handled=False)


@contextmanager
def smtp_server(mailbox: Mailbox, tls: tuple[Path, Path] | None = None, implicit: bool = False) -> Iterator[int]:
    """An SMTP server on 127.0.0.1 delivering to ``mailbox``; with ``tls`` (cert, key) it requires STARTTLS
    (``implicit``: TLS from the first byte, SMTPS) and, when ``mailbox.users``, AUTH (PLAIN or LOGIN, only over
    TLS). Yields its port."""
    import ssl

    kwargs = {}
    if tls:
        context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        context.load_cert_chain(*map(str, tls))
        # aiosmtpd counts only STARTTLS as TLS for AUTH: over SMTPS the whole session is TLS already
        kwargs = {"ssl_context": context, "auth_require_tls": False} if implicit else \
            {"tls_context": context, "require_starttls": True}
    if mailbox.users:
        kwargs |= {"authenticator": mailbox.authenticate, "auth_required": True}
    port = free_port()
    controller = Controller(mailbox, hostname="127.0.0.1", port=port, server_hostname="localhost", **kwargs)
    controller.start()
    try:
        yield port
    finally:
        controller.stop()


_RSYSLOG_CONF = """\
global(workDirectory="{work}" parser.escapeControlCharactersOnReceive="off" maxMessageSize="64k")
module(load="imudp")
module(load="imtcp")
input(type="imudp" address="127.0.0.1" port="{udp}")
input(type="imtcp" address="127.0.0.1" port="{tcp}")
template(name="fields" type="list" option.jsonf="on") {{
  property(outname="pri" name="pri" format="jsonf")
  property(outname="version" name="protocol-version" format="jsonf")
  property(outname="timestamp" name="timereported" dateFormat="rfc3339" format="jsonf")
  property(outname="hostname" name="hostname" format="jsonf")
  property(outname="app_name" name="app-name" format="jsonf")
  property(outname="procid" name="procid" format="jsonf")
  property(outname="msgid" name="msgid" format="jsonf")
  property(outname="sd" name="structured-data" format="jsonf")
  property(outname="msg" name="msg" format="jsonf")
  property(outname="raw" name="rawmsg" format="jsonf")
  property(outname="input" name="inputname" format="jsonf")
}}
*.* action(type="omfile" file="{out}" template="fields")
"""


@dataclass
class Rsyslog:
    """A running rsyslogd: its UDP and TCP ports and what it wrote."""

    udp_port: int
    tcp_port: int
    out: Path

    def received(self, count: int, timeout_s: float = 10.0) -> list[dict]:
        """The first ``count`` messages rsyslogd parsed (waits for them; fewer after ``timeout_s`` fails)."""
        deadline = time.monotonic() + timeout_s
        while True:
            lines = self.out.read_text().splitlines() if self.out.exists() else []
            if len(lines) >= count or time.monotonic() > deadline:
                break
            time.sleep(0.05)
        assert len(lines) >= count, f"rsyslogd wrote {len(lines)} of {count} messages: {lines}"
        return [json.loads(line) for line in lines[:count]]


@contextmanager
def rsyslog(folder: Path) -> Iterator[Rsyslog]:
    """rsyslogd in the foreground (``-n``) with its config, work directory and pid file in ``folder`` (it runs
    unprivileged as well: the ports are above 1024, the files in ``folder``)."""
    from tests.conftest import require_tool

    require_tool(RSYSLOGD)
    folder.mkdir(parents=True, exist_ok=True)
    receiver = Rsyslog(free_port(), free_port(), folder / "received.jsonl")
    conf = folder / "rsyslog.conf"
    conf.write_text(_RSYSLOG_CONF.format(work=folder, udp=receiver.udp_port, tcp=receiver.tcp_port,
                                         out=receiver.out))
    log = folder / "rsyslogd.log"
    proc = subprocess.Popen([RSYSLOGD, "-n", "-f", str(conf), "-i", str(folder / "rsyslogd.pid")],
                            stdout=log.open("wb"), stderr=subprocess.STDOUT)
    try:
        _wait_listening(proc, receiver.tcp_port, log)
        yield receiver
    finally:
        stop_process(proc)


def _wait_listening(proc: subprocess.Popen, port: int, log: Path) -> None:
    """Until rsyslogd accepts on its TCP port (its UDP input is set up before it)."""
    import socket

    deadline = time.monotonic() + 15
    while True:
        if proc.poll() is not None:
            raise RuntimeError(f"rsyslogd exited with {proc.returncode}:\n{log.read_text()}")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            return
        except OSError:
            if time.monotonic() > deadline:
                raise RuntimeError(f"rsyslogd did not listen on {port}:\n{log.read_text()}") from None
            time.sleep(0.1)


def parse_structured_data(text: str) -> dict[str, dict[str, str]]:
    """RFC 5424 STRUCTURED-DATA (section 6.3) as ``{SD-ID: {PARAM-NAME: value}}``, values unescaped
    (section 6.3.3: ``\\"``, ``\\\\`` and ``\\]``; any other backslash stays). Raises ``ValueError`` on bad syntax."""
    out: dict[str, dict[str, str]] = {}
    i = 0
    while i < len(text):
        if text[i] != "[":
            raise ValueError(f"an SD-ELEMENT starts with '[' at {i}: {text!r}")
        end = i + 1
        while end < len(text) and text[end] not in " ]":
            end += 1
        params: dict[str, str] = {}
        out[text[i + 1:end]] = params
        i = end
        while text[i] == " ":
            eq = text.index("=", i)
            name = text[i + 1:eq]
            if text[eq + 1] != '"':
                raise ValueError(f"PARAM-VALUE of {name} is not quoted: {text!r}")
            j, value = eq + 2, []
            while text[j] != '"':
                if text[j] == "\\" and text[j + 1] in '"\\]':
                    value.append(text[j + 1])
                    j += 2
                elif text[j] in '"]':
                    raise ValueError(f"unescaped {text[j]!r} in PARAM-VALUE of {name}: {text!r}")
                else:
                    value.append(text[j])
                    j += 1
            params[name] = "".join(value)
            i = j + 1
        if text[i] != "]":
            raise ValueError(f"an SD-ELEMENT ends with ']' at {i}: {text!r}")
        i += 1
    return out
