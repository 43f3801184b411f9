"""The e-mail channel: a batch of notices as one message over SMTP, through Django's SMTP mail backend.

The server, port, STARTTLS or implicit TLS, user and password are the site's (``EMAIL_*`` settings, read from
``IBWEB_SMTP_*``); a channel's ``config`` names ``recipients`` (a list or a comma-separated string), ``from``
(default ``DEFAULT_FROM_EMAIL``) and ``subject_prefix`` (default ``[ibweb]``).

Headers that let mail clients and the receiving side make sense of repeats (RFC 5322 section 3.6.4):

* ``Message-ID`` is made of the queue's idempotency key of the message (``config["delivery_key"]``; without it,
  the notices' keys): an attempt repeated is the same message, which the receiving side can drop;
* each notice has an *episode* (its kind, labels and start: the same in its firing and its resolved notice),
  whose id every mail of that notice lists in ``References``; a resolved mail also names it in ``In-Reply-To``,
  so clients thread the resolution with the alert it clears (the firing mail's own id is its delivery's key,
  which the resolved notice does not know);
* ``Auto-Submitted: auto-generated`` (RFC 3834), so vacation responders do not answer.
"""

from __future__ import annotations

import contextlib
import hashlib
import html
import smtplib
import ssl
from collections.abc import Mapping, Sequence
from typing import Any

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.mail import EmailMultiAlternatives, get_connection
from django.core.validators import validate_email

from .base import ConfigError, Notice, SendResult

__all__ = ["EmailSender", "SENDER", "message_for"]

#: The backend, named: the e-mail channel is SMTP whatever ``EMAIL_BACKEND`` the site's other mail uses.
SMTP_BACKEND = "django.core.mail.backends.smtp.EmailBackend"
_SEVERITY_ORDER = {"critical": 0, "warning": 1, "info": 2}


class EmailSender:
    """Sends a batch of notices to the channel's recipients as one e-mail (text and HTML), one SMTP attempt."""

    kind = "email"

    def check_config(self, config: Mapping[str, Any]) -> dict[str, Any]:
        """``recipients`` (addresses, at least one), ``from`` (an address; the site's ``IBWEB_SMTP_FROM`` when
        unset), ``subject_prefix`` (one line, at most 60 characters, ``[ibweb]``)."""
        allowed = {"recipients", "from", "subject_prefix"}
        unknown = sorted(set(config) - allowed)
        if unknown:
            raise ConfigError(unknown[0], f"not a field of an email channel ({', '.join(sorted(allowed))})")
        out: dict[str, Any] = {"recipients": _recipients(config)}
        if config.get("from"):
            out["from"] = _from(config)
        out["subject_prefix"] = _prefix(config)
        return out

    def send(self, notices: Sequence[Notice], config: Mapping[str, Any]) -> SendResult:
        if not notices:
            return SendResult(ok=True, detail="nothing to send")
        try:
            message = message_for(notices, config)
        except ConfigError as exc:
            return SendResult(ok=False, detail=f"channel config: {exc}", retry=False)
        connection = get_connection(SMTP_BACKEND, fail_silently=False)
        refused: dict[str, tuple[int, bytes]] = {}
        try:
            connection.open()
            _record_refusals(connection.connection, refused)
            connection.send_messages([message])
        except smtplib.SMTPAuthenticationError as exc:
            return SendResult(ok=False, detail=f"SMTP authentication refused: {_reply(exc)}", retry=False)
        except smtplib.SMTPRecipientsRefused as exc:
            each = "; ".join(f"{rcpt}: {code} {_text(msg)}" for rcpt, (code, msg) in exc.recipients.items())
            return SendResult(ok=False, detail=f"every recipient refused: {each}", retry=_temporary(exc.recipients))
        except smtplib.SMTPSenderRefused as exc:
            return SendResult(ok=False, detail=f"sender {exc.sender} refused: {_reply(exc)}",
                              retry=_transient_code(exc.smtp_code))
        except smtplib.SMTPResponseException as exc:  # DATA refused, HELO refused, ...
            return SendResult(ok=False, detail=f"SMTP error: {_reply(exc)}", retry=_transient_code(exc.smtp_code))
        except smtplib.SMTPNotSupportedError as exc:  # STARTTLS or AUTH asked of a server that offers neither
            return SendResult(ok=False, detail=f"SMTP server does not support it: {exc}", retry=False)
        except ssl.SSLCertVerificationError as exc:
            return SendResult(ok=False, detail=f"SMTP server's certificate refused: {exc.verify_message}",
                              retry=False)
        except smtplib.SMTPServerDisconnected as exc:
            return SendResult(ok=False, detail=f"SMTP server hung up: {exc}", retry=True)
        except smtplib.SMTPException as exc:  # e.g. no AUTH method in common with the server
            return SendResult(ok=False, detail=f"SMTP error: {exc}", retry=False)
        except OSError as exc:  # refused, reset, timed out, unreachable, TLS handshake cut short
            return SendResult(ok=False, detail=f"SMTP server {settings.EMAIL_HOST}:{settings.EMAIL_PORT} not "
                                               f"reached: {type(exc).__name__}: {exc}", retry=True)
        finally:
            with contextlib.suppress(OSError):  # the server left first: the message's fate is decided above
                connection.close()
        detail = f"sent to {len(message.to)} recipient(s) as {message.extra_headers['Message-ID']}"
        if refused:
            detail += "; refused: " + "; ".join(f"{rcpt}: {code} {_text(msg)}" for rcpt, (code, msg) in
                                                 refused.items())
        return SendResult(ok=True, detail=detail)


def message_for(notices: Sequence[Notice], config: Mapping[str, Any]) -> EmailMultiAlternatives:
    """The e-mail of one batch (:class:`ConfigError` naming the config field that is wrong).

    ``config["delivery_key"]``, the queue's idempotency key of the message, makes its ``Message-ID``; without it
    (a test send), the notices' keys do.
    """
    recipients, sender = _recipients(config), _from(config)
    domain = sender.rsplit("@", 1)[1]
    ordered = sorted(notices, key=lambda n: (_SEVERITY_ORDER.get(n.severity, 3), n.starts_at, n.key))
    key = str(config.get("delivery_key") or _digest(*sorted(n.key for n in notices)))
    message_id = f"<ibweb.{key}@{domain}>"
    episodes = list(dict.fromkeys(f"<ibweb.episode.{_episode(n)}@{domain}>" for n in ordered))
    headers = {"Message-ID": message_id, "References": " ".join(episodes), "Auto-Submitted": "auto-generated",
               "X-Ibweb-Keys": ", ".join(n.key for n in ordered)[:900]}
    if all(n.state == "resolved" for n in notices):
        headers["In-Reply-To"] = episodes[0]
    message = EmailMultiAlternatives(subject=_subject(_prefix(config), ordered), body=_text_body(ordered),
                                     from_email=sender, to=recipients, headers=headers)
    message.attach_alternative(_html_body(ordered), "text/html")
    return message


def _recipients(config: Mapping[str, Any]) -> list[str]:
    value = config.get("recipients") or []
    listed = [r.strip() for r in value.split(",") if r.strip()] if isinstance(value, str) else value
    if not isinstance(listed, list | tuple) or not listed:
        raise ConfigError("recipients", f"{value!r}: one address or more (a list, or separated by commas)")
    for address in listed:
        _address("recipients", address)
    return list(listed)


def _from(config: Mapping[str, Any]) -> str:
    return _address("from", config.get("from") or settings.DEFAULT_FROM_EMAIL)


def _address(field: str, value: Any) -> str:
    try:
        if not isinstance(value, str):
            raise ValidationError("not a string")
        validate_email(value)
    except ValidationError:
        raise ConfigError(field, f"{value!r} is not an e-mail address") from None
    return value


def _prefix(config: Mapping[str, Any]) -> str:
    prefix = config.get("subject_prefix", "[ibweb]")
    if not isinstance(prefix, str) or len(prefix) > 60 or "\r" in prefix or "\n" in prefix:
        raise ConfigError("subject_prefix", f"{prefix!r}: one line of at most 60 characters")
    return prefix.strip()


def _subject(prefix: str, ordered: list[Notice]) -> str:
    first = ordered[0]
    state = "RESOLVED" if all(n.state == "resolved" for n in ordered) else "FIRING"
    more = f" (+{len(ordered) - 1} more)" if len(ordered) > 1 else ""
    line = f"{prefix} {state} {first.severity} {first.kind}: {first.summary}{more}".strip()
    return " ".join(line.split())[:250]  # one header line: no CR/LF from a summary


def _when(notice: Notice) -> str:
    text = f"since {notice.starts_at.isoformat()}"
    return text + (f", cleared {notice.ends_at.isoformat()}" if notice.ends_at else "")


def _text_body(ordered: list[Notice]) -> str:
    parts = []
    for n in ordered:
        labels = ", ".join(f"{k}={v}" for k, v in sorted(n.labels.items()))
        lines = [f"[{n.state.upper()}] {n.severity} {n.kind}: {n.summary}", f"  {_when(n)}", f"  {labels}"]
        lines += [f"  {line}" for line in n.body.splitlines()]
        lines += [f"  {k}: {v}" for k, v in sorted(n.annotations.items())]
        if n.url:
            lines.append(f"  {n.url}")
        parts.append("\n".join(lines))
    return "\n\n".join(parts) + "\n"


def _html_body(ordered: list[Notice]) -> str:
    e = html.escape
    rows = []
    for n in ordered:
        labels = "<br>".join(f"{e(k)}={e(v)}" for k, v in sorted(n.labels.items()))
        summary = f'<a href="{e(n.url)}">{e(n.summary)}</a>' if n.url else e(n.summary)
        rows.append(f"<tr><td>{e(n.state)}</td><td>{e(n.severity)}</td><td>{e(n.kind)}</td><td>{summary}"
                    f"<pre>{e(n.body)}</pre></td><td>{labels}</td><td>{e(_when(n))}</td></tr>")
    head = "<tr><th>state</th><th>severity</th><th>kind</th><th>notice</th><th>labels</th><th>when</th></tr>"
    return f'<html><body><table border="1" cellpadding="4">{head}{"".join(rows)}</table></body></html>'


def _digest(*parts: str) -> str:
    return hashlib.sha256("\x1f".join(parts).encode()).hexdigest()[:40]


def _episode(notice: Notice) -> str:
    """What a notice's firing and resolved mails share: kind, labels (but the severity, which may change while the
    condition lasts) and start."""
    return _digest(notice.kind, *(f"{k}={v}" for k, v in sorted(notice.labels.items()) if k != "severity"),
                   notice.starts_at.isoformat())


def _record_refusals(smtp: smtplib.SMTP, refused: dict) -> None:
    """Keep the recipients an SMTP server refused while accepting others (Django's backend drops that list)."""
    sendmail = smtp.sendmail

    def recorded(*args, **kwargs):
        got = sendmail(*args, **kwargs)
        refused.update(got or {})
        return got

    smtp.sendmail = recorded


def _text(msg: bytes | str) -> str:
    return msg.decode(errors="replace") if isinstance(msg, bytes) else str(msg)


def _reply(exc: smtplib.SMTPResponseException) -> str:
    return f"{exc.smtp_code} {_text(exc.smtp_error)}"


def _transient_code(code: int) -> bool:
    """4xx replies are temporary (RFC 5321 section 4.2.1), 5xx permanent."""
    return not 500 <= int(code) < 600


def _temporary(recipients: Mapping[str, tuple[int, bytes]]) -> bool:
    return any(_transient_code(code) for code, _ in recipients.values())


SENDER = EmailSender()
