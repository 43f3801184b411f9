"""``sminfo`` output read into :class:`SmInfo` records (one per subnet manager the collector asked).

``sminfo`` (infiniband-diags, ``sminfo.c``) prints one line per query::

    sminfo: sm lid %d sm guid 0x%" PRIx64 ", activity count %u priority %d state %d %s

where the state is 0..3 and its name ``SMINFO_NOTACT``, ``SMINFO_DISCOVER``, ``SMINFO_STANDBY`` or
``SMINFO_MASTER`` (``"???"`` for a value outside 0..3). Without an argument it asks the master the local
port knows (``resolve_sm_portid``); the collector asks each SM it knows by LID (``sminfo <lid>``) and
concatenates the lines, so a file holds one line per SM. Lines a captured terminal adds (prompts, banners,
tools' stderr) are skipped with a warning (:mod:`fabric_engine.captured`); any other line is an error
naming ``file:line``.

>>> r = read_sminfo("sminfo: sm lid 8 sm guid 0xb83fd20300000041, activity count 159 priority 0 state 3 "
...                 "SMINFO_MASTER\\n")
>>> r.sms[0].lid, hex(r.sms[0].guid), r.sms[0].state_name, r.sms[0].master
(8, '0xb83fd20300000041', 'MASTER', True)
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ..captured import Warning, noise, strip_bom, warning
from ..errors import FormatError

__all__ = ["SmInfo", "SmInfoCapture", "read_sminfo", "STATES", "MASTER", "MAX_SMINFO_BYTES"]

#: SMInfo states by code (IBA 14.4.1; the names ``sminfo`` prints without their ``SMINFO_`` prefix).
STATES: tuple[str, ...] = ("NOTACTIVE", "DISCOVERING", "STANDBY", "MASTER")
MASTER = 3
#: Largest capture read (a line is about 110 bytes; no subnet has 10,000 SMs).
MAX_SMINFO_BYTES = 1 << 20
_LINE = re.compile(r"sminfo: sm lid (\d{1,6}) sm guid 0x([0-9a-fA-F]{1,16}), activity count (\d{1,10}) "
                   r"priority (-?\d{1,4}) state (-?\d{1,4})(?: (\S+))?")


@dataclass(frozen=True)
class SmInfo:
    """One subnet manager as ``sminfo`` printed it; ``line``: where in the capture."""

    lid: int
    guid: int
    activity: int
    priority: int
    state: int
    line: int = 0

    @property
    def state_name(self) -> str:
        return STATES[self.state] if 0 <= self.state < len(STATES) else f"state {self.state}"

    @property
    def master(self) -> bool:
        return self.state == MASTER

    def as_dict(self) -> dict:
        return {"lid": self.lid, "guid": f"0x{self.guid:016x}", "activity": self.activity,
                "priority": self.priority, "state": self.state_name}


@dataclass(frozen=True)
class SmInfoCapture:
    """The SMs of one capture and the lines skipped as terminal noise."""

    source: str
    sms: tuple[SmInfo, ...]
    warnings: list[Warning] = field(default_factory=list)


def read_sminfo(data: str | bytes, source: str = "<sminfo>") -> SmInfoCapture:
    """The SMs ``data`` (``sminfo`` lines) names; raises :class:`FormatError` naming ``source:line``."""
    if len(data) > MAX_SMINFO_BYTES:
        raise FormatError(source, None, f"is {len(data)} bytes, more than the limit of {MAX_SMINFO_BYTES}")
    if isinstance(data, bytes):
        try:
            data = data.decode()
        except UnicodeDecodeError as exc:
            raise FormatError(source, data[:exc.start].count(b"\n") + 1, "not UTF-8 text") from None
    warnings: list[Warning] = []
    text = strip_bom(data, warnings)
    sms = []
    for no, raw in enumerate(text.splitlines(), 1):  # one line per SM
        line = raw.strip()
        if not line:
            continue
        m = _LINE.fullmatch(line)
        if m is None:
            why = noise(raw)
            if why is None:
                raise FormatError(source, no, f"not an sminfo line: {line[:80]!r}")
            warnings.append(warning(no, raw, why))
            continue
        lid, guid, act, prio, state = (int(m.group(i), 16 if i == 2 else 10) for i in range(1, 6))
        if not 0 < lid < 0xC000:
            raise FormatError(source, no, f"sm lid {lid} is not a unicast LID (1..0xBFFF)")
        if not 0 <= prio <= 15:
            raise FormatError(source, no, f"priority {prio} is outside 0..15")
        sms.append(SmInfo(lid, guid, act, prio, state, no))
    if not sms:
        raise FormatError(source, None, "no sminfo line")
    return SmInfoCapture(source, tuple(sms), warnings)
