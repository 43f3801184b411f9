"""A finding of the fabric validation: which check, how bad, what it is about and the evidence.

Every check of :mod:`fabric_engine.validation` returns a list of :class:`Finding`; the report
(:mod:`.report`) gathers them. ``link`` is the directed link the map highlights (a cable ``c`` is drawn as
its directed link ``c``, from end ``a`` to end ``b``), ``None`` when the finding is about no link.
"""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["Finding", "ERROR", "WARNING", "INFO", "SEVERITIES", "severity_rank"]

ERROR, WARNING, INFO = "error", "warning", "info"
#: Severities, worst first.
SEVERITIES: tuple[str, ...] = (ERROR, WARNING, INFO)


def severity_rank(severity: str) -> int:
    """0 for the worst severity; raises ``ValueError`` for an unknown one."""
    return SEVERITIES.index(severity)


@dataclass(frozen=True)
class Finding:
    """One problem (or observation) a check found.

    ``check``: the check's name; ``severity``: one of :data:`SEVERITIES`; ``subject``: what it is about, written
    ``node``, ``node/port`` or ``node/port - node/port`` (a link); ``message``: one line for people;
    ``evidence``: the values that show it (JSON-ready); ``link``: the directed link on the map, or ``None``.
    """

    check: str
    severity: str
    subject: str
    message: str
    evidence: dict = field(default_factory=dict)
    link: int | None = None

    def __post_init__(self) -> None:
        if self.severity not in SEVERITIES:
            raise ValueError(f"finding {self.check}/{self.subject}: severity {self.severity!r} is not one of "
                             f"{', '.join(SEVERITIES)}")

    @property
    def key(self) -> tuple[str, str]:
        """What identifies the finding from one report to the next: ``(check, subject)``."""
        return self.check, self.subject

    def as_dict(self) -> dict:
        return {"check": self.check, "severity": self.severity, "subject": self.subject, "message": self.message,
                "evidence": self.evidence, "link": self.link}
