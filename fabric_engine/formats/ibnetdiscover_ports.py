"""Read ``ibnetdiscover -p`` (``--ports``): one line per port instead of one record per node.

infiniband-diags' ``dump_ports_report`` (ibnetdiscover.c) prints, for every node and every port it
discovered, highest port first::

    SW  1719 10 0x7cfe900300a5a2c0 4x EDR - CA   134  1 0xb83fd20300000011 ( 'leaf-01' - 'node01 HCA-1' )
    SW  1719 11 0x7cfe900300a5a2c0 4x SDR                                    'leaf-01'

that is node type (``SW``/``CA``/``RT``), the switch's LID or the CA port's LID, port number, port GUID,
active width (``1x``, ``4x``, ... or ``??``) and speed (``SDR`` ... ``XDR``, ``FDR10`` or ``???``), then
either `` - `` and the same four fields of the remote port with both NodeDescriptions in
``( '<local>' - '<remote>' )``, or, for an unconnected port, the NodeDescription alone.

What the format does not carry is recovered by fixed rules, never guessed per line: a switch is
its port GUID (a switch's ports share one); a CA is the ports that share its NodeDescription and
``port GUID - port number`` (ports of one HCA are numbered from its node GUID, as OpenSM and ibsim
give them), its node GUID that difference; a node has as many ports as the highest port number
seen. Lines are turned into :class:`~.records.Records` and assembled like any topology text, so
every link must be listed from both its ends, and terminal noise is skipped with a warning, other
tools' lines of the same terminal session with one warning per tool (:class:`~fabric_engine.captured.Session`).
"""

from __future__ import annotations

import re

from ..captured import Session, noise, strip_bom, warning
from ..errors import FormatError
from ..topology import KIND_HOST, KIND_SWITCH, SPEEDS, Fabric
from ..topology.limits import MAX_NODE_PORTS, MAX_UNICAST_LID
from .netfile import MAX_LINE_CHARS
from .records import Records, assemble

__all__ = ["read", "looks_like"]

_END = r"(SW|CA|RT|\?\?)\s+(\d+)\s+(\d+)\s+0x([0-9A-Fa-f]{1,16})"
_LINE = re.compile(rf"^{_END}\s+(\d+x|\?\?)\s+([A-Za-z0-9]+|\?\?\?)(?:\s+-\s+{_END}\s+\(\s?'|\s+')")
_DETECT = re.compile(r"^(?:SW|CA)\s+\d+\s+\d+\s+0x[0-9A-Fa-f]{16}\s+(?:\d+x|\?\?)\s", re.M)
_SPEED = {s: i for i, s in enumerate(SPEEDS)}


def looks_like(text: str) -> bool:
    """True if ``text`` has ``ibnetdiscover -p`` port lines."""
    return _DETECT.search(text) is not None


def _names(rest: str) -> tuple[str, str] | None:
    """``('<local>' - '<remote>' )`` after the opening quote -> the two descriptions."""
    body = rest.rstrip()
    if not body.endswith("' )") and not body.endswith("')"):
        return None
    body = body[: body.rfind("'")]
    cut = body.find("' - '")
    return (body[:cut], body[cut + 5:]) if cut >= 0 else None


def read(text: str, source: str = "<ibnetdiscover -p>") -> Fabric:
    """Parse ``ibnetdiscover -p`` output into a :class:`Fabric`; raises ``FormatError`` naming the line."""
    rec = Records()
    text = strip_bom(text, rec.warnings)
    own: list[tuple[int, str, int, int, int, int, int, str, int, int, str, int]] = []
    session = Session("ibnetdiscover -p")
    for lineno, raw in enumerate(text.splitlines(), start=1):
        if len(raw) > MAX_LINE_CHARS:
            raise FormatError(source, lineno, f"line of {len(raw):,} characters")
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        m = _LINE.match(line)
        if m is None:
            reason = noise(line)
            if reason is not None:
                rec.warnings.append(warning(lineno, line, f"{reason} skipped"))
            elif session.foreign(lineno, line) is None:
                raise FormatError(source, lineno, f"not an 'ibnetdiscover -p' port line: {line[:80]!r}")
            continue
        rest = line[m.end():]
        if m.group(7) is None:  # unconnected: only the local description
            if not rest.endswith("'"):
                raise FormatError(source, lineno, "truncated line: the node description's closing quote is missing")
            local, remote = rest[:-1], ""
        else:
            pair = _names(rest)
            if pair is None:
                raise FormatError(source, lineno, "expected ( '<local description>' - '<remote description>' )")
            local, remote = pair
        own.append((lineno, m.group(1), int(m.group(2)), int(m.group(3)), int(m.group(4), 16),
                    -1 if m.group(5) == "??" else int(m.group(5)[:-1]), _speed(m.group(6), source, lineno),
                    local, *(_end(m, source, lineno)), remote))
    rec.warnings.extend(session.warnings())
    if not own:
        raise FormatError(source, None, "no 'ibnetdiscover -p' port lines found")
    _fill(rec, own, source)
    return assemble(rec, source, "ibnetdiscover")


def _speed(name: str, source: str, lineno: int) -> int:
    if name == "???":
        return -1
    if name.upper() not in _SPEED:
        raise FormatError(source, lineno, f"unknown link speed {name!r}; known: {', '.join(SPEEDS)}")
    return _SPEED[name.upper()]


def _end(m: re.Match, source: str, lineno: int) -> tuple[int, int, str, int]:
    """(remote port, remote port GUID, remote type, remote LID) of a connected line, zeros when unconnected."""
    if m.group(7) is None:
        return 0, 0, "", 0
    return int(m.group(9)), int(m.group(10), 16), m.group(7), int(m.group(8))


def _check(source: str, lineno: int, kind: str, lid: int, port: int) -> None:
    if kind in ("RT", "??"):
        raise FormatError(source, lineno, f"node type {kind!r}: routers and unknown nodes are not supported")
    if not 1 <= port <= MAX_NODE_PORTS:
        raise FormatError(source, lineno, f"port {port} is outside 1..{MAX_NODE_PORTS}")
    if lid > MAX_UNICAST_LID and lid != 0xFFFF:
        raise FormatError(source, lineno, f"lid {lid} is above the highest unicast LID {MAX_UNICAST_LID}")


def _fill(rec: Records, own: list, source: str) -> None:
    """Nodes from the port lines (rules in the module doc), then one port entry per connected line."""
    node_of_port: dict[tuple[str, int], int] = {}  # ("SW", guid) or ("CA", port guid) -> node
    ca_key: dict[tuple[str, int], int] = {}
    for lineno, kind, lid, port, pguid, _w, _s, local, _rp, _rg, _rk, _rl, _remote in own:
        _check(source, lineno, kind, lid, port)
        key = (local, pguid - port)
        n = ca_key.get(key) if kind == "CA" else node_of_port.get(("SW", pguid))
        if n is None:
            n = len(rec.n_kind)
            guid = pguid - port if kind == "CA" and pguid > port else pguid
            node_id = f"{'H' if kind == 'CA' else 'S'}-{n}"
            rec.by_id[node_id] = n
            rec.n_kind.append(KIND_HOST if kind == "CA" else KIND_SWITCH)
            rec.n_ports.append(port)
            rec.n_guid.append(guid)
            rec.n_id.append(node_id)
            rec.n_desc.append(local)
            rec.n_lid.append(0 if kind == "CA" or lid == 0xFFFF else lid)
            rec.n_line.append(lineno)
            rec.n_sysimg.append(0)
            if kind == "CA":
                ca_key[key] = n
            else:
                node_of_port[("SW", pguid)] = n
        rec.n_ports[n] = max(rec.n_ports[n], port)
        if kind == "CA":
            if ("CA", pguid) in node_of_port and node_of_port[("CA", pguid)] != n:
                raise FormatError(source, lineno, f"port GUID 0x{pguid:016x} is listed for two CAs")
            node_of_port[("CA", pguid)] = n
    seen: set[tuple[int, int]] = set()
    for lineno, kind, lid, port, pguid, width, speed, _local, rport, rguid, rkind, _rlid, _remote in own:
        n = node_of_port[(kind, pguid)]
        if (n, port) in seen:
            raise FormatError(source, lineno, f"port {port} of {rec.n_desc[n]!r} is listed twice")
        seen.add((n, port))
        if not rport:
            continue
        _check(source, lineno, rkind, 0, rport)
        r = node_of_port.get((rkind, rguid))
        if r is None:
            raise FormatError(source, lineno, f"remote port GUID 0x{rguid:016x} ({rkind}) has no line of its own "
                                              f"(truncated output?)")
        entry = len(rec.p_node)
        rec.p_node.append(n)
        rec.p_port.append(port)
        rec.p_rid.append(rec.n_id[r])
        rec.p_rport.append(rport)
        rec.p_wmask.append(0)
        rec.p_smask.append(0)
        rec.p_tok.append((width, speed))
        rec.p_lid.append(0 if lid == 0xFFFF else lid)
        rec.p_line.append(lineno)
        if kind == "CA":
            rec.guid_override.append((entry, 0, pguid))
