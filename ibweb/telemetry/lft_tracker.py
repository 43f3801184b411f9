"""The LFT tracker of a telemetry-fed fabric: it routes with the subnet manager's LFT dump, else a computed routing.

OpenSM writes its unicast forwarding tables to ``opensm-lfts.dump`` in its dump
directory (``dump_files_dir``: ``--dump_files_dir``, else ``$OSM_TMP_DIR``, else ``/var/log``;
``osm_subnet.c``) at the end of every routing pass when the routing log bit ``0x40`` of
``-D`` is on (``osm_dump.c``, ``osm_dump_all``), one table per switch, each closed by
``"<n> lids dumped"``. It overwrites the file in place, so a read is kept only when the file
did not change while it was read and ends with that footer; otherwise it is tried again on
a later tick.

:class:`RoutingTracker` decides what the engine routes with:

* a discovery (first or new): the dump, mapped onto the discovered fabric, when its
  content agrees with that discovery (:func:`~fabric_engine.telemetry.lftcheck.check_lfts`:
  no entry leaves through a port without a cable, every switch has a table, every cabled
  host LID is routed by its switch). Which file is newer is never asked: OpenSM may
  rewrite the dump 0.2 s after a cut, before or after our sweep sees the cut (issue 35);
* when they disagree, both are read again, up to ``rereads`` times ``wait_s`` apart
  (the dump may have been read half-written, or OpenSM may re-route a moment later;
  the discovery, through ``rediscover``, may be the older one). A dump that agrees with
  a fresher discovery than the one given is the newer of the two: it is used and the
  next sweep brings the cabling it was made for. Only a dump that disagrees with both
  gives way to the fabric's ``routing_engine``, with a warning that says what disagreed
  (how many entries, which switch ports, an example);
* every tick: a dump whose modification time or size changed is judged the same way and
  loaded when it agrees (when it only agrees with a fresher discovery, it waits for the
  sweep that brings it, and the routing in use stays);
* no dump: computed with the fabric's ``routing_engine`` (``minhop`` by default;
  an engine that refuses the discovered topology falls back to ``minhop``).

Every change yields one event (``{"kind": "routing", "action", "source", "engine",
"path", "severity", "message", "t"}``) naming what happened and why. The hosts it names are
parts of the discovery it is about (:mod:`.message_parts`), a fresher discovery's changes too
(re-indexed on it; a host only the fresher one holds is an object with its tenants there), so
each view renders them; what the dump reader quotes of the dump is left out (``'…'``, logged whole).

The routing in use goes into the fabric's runtime record (:mod:`ibweb.runtime.record`,
published by the fabric runner), where the web processes' path queries read it;
:func:`publish_status` keeps the small description the admin and the API show.
"""

from __future__ import annotations

import dataclasses
import logging
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from fabric_engine.errors import FabricEngineError
from fabric_engine.formats import opensm_lfts
from fabric_engine.routing import Routing, route
from fabric_engine.routing.options import engine_options
from fabric_engine.telemetry import diff_topology
from fabric_engine.telemetry.lftcheck import LftCheck, check_lfts
from fabric_engine.topology import Fabric

from . import store
from .message_parts import held, rebased, templated

__all__ = ["RoutingTracker", "Judgement", "DumpNotReady", "dump_signature", "read_dump", "read_dump_text",
           "dead_entries", "publish_status", "ROUTING_CHANGES", "REREADS", "REREAD_WAIT_S"]

log = logging.getLogger("ibweb.telemetry")

#: Topology event kinds that change which paths exist (width and speed changes do not).
ROUTING_CHANGES = frozenset({"link_down", "link_up", "node_vanished", "node_appeared"})
DUMP = "opensm-dump"
COMPUTED = "computed"
_FOOTER = re.compile(r"\d+ (?:valid )?lids dumped\s*\Z")
#: A text the dump reader quotes (``{text!r}``), and the words it quotes of its own.
_QUOTED = re.compile(r"'(?:[^'\\\n]|\\.)*'|\"(?:[^\"\\\n]|\\.)*\"")
_READERS_WORDS = frozenset({"LID PORT # ...", "lids dumped", "Unicast lids ... of switch"})
#: Times a dump that disagrees with the discovery is read again (with the discovery), and the seconds between reads.
REREADS = 3
REREAD_WAIT_S = 0.5
#: Changes a message quotes (the rest counted: ``(+n more)``).
_MOST = 3

Signature = tuple[str, int, int]


class DumpNotReady(Exception):
    """The dump changed while it was read, or ends in the middle of a table: try again later."""


def dump_signature(path: Path | None) -> Signature | None:
    """``(path, mtime_ns, size)`` of the dump file, or None when it does not exist."""
    if path is None:
        return None
    try:
        st = path.stat()
    except OSError:
        return None
    return str(path), st.st_mtime_ns, st.st_size


def read_dump_text(path: Path) -> tuple[str, Signature]:
    """The whole text of the dump at ``path`` and the signature of the file read.

    Raises :class:`DumpNotReady` while the file is being written (it changed while read, or does not end
    with a table's footer) or is not there.
    """
    before = dump_signature(path)
    if before is None:
        raise DumpNotReady(f"{path}: not found")
    try:
        text = path.read_text(errors="replace")
    except OSError as exc:
        raise DumpNotReady(f"{path}: {exc.strerror or exc}") from None
    after = dump_signature(path)
    if after != before or not _FOOTER.search(text):
        raise DumpNotReady(f"{path}: being written")
    return text, after


def read_dump(fabric: Fabric, path: Path) -> tuple[Routing, Signature]:
    """The LFTs in ``path`` mapped onto ``fabric``, and the signature of the file read.

    Raises :class:`DumpNotReady` while the file is being written and
    :class:`~fabric_engine.errors.FormatError` (naming file and line) when it is not a dump of this fabric.
    """
    text, sig = read_dump_text(path)
    return opensm_lfts.read(text, fabric, str(path)), sig


def dead_entries(routing: Routing) -> int:
    """LFT entries toward a LID of the fabric that leave through a port without a cable (:func:`check_lfts`)."""
    return check_lfts(routing).dead


def _reader_error(exc: Exception, fabric: Fabric) -> str:
    """The dump reader's error as an event says it: what it quotes of the dump (an entry's comment names a host,
    perhaps one ``fabric`` lacks, which no view could relabel) as ``'…'``, but for the names of ``fabric`` and its
    switches and the reader's own words (fail-closed; the whole error is logged)."""
    kept = {str(fabric.name), *fabric.node_name[fabric.switches].astype(str).tolist(), *_READERS_WORDS}
    return _QUOTED.sub(lambda m: m[0] if m[0][1:-1] in kept else "'…'", str(exc))


def _summary(changes: list[dict], most: int = _MOST) -> str:
    shown = "; ".join(c["message"] for c in changes[:most])
    return shown + (f" (+{len(changes) - most} more)" if len(changes) > most else "")


@dataclass
class Judgement:
    """A dump read (perhaps several times) and judged against a discovery by :meth:`RoutingTracker.judge`.

    ``verdict``: ``"agrees"``; ``"newer"`` (it disagrees with the discovery given but agrees with a fresher one,
    whose cabling changes from the given one are ``fresh``, quoted on the given one: its node indices, -1 with the
    ``gone`` objects of nodes only the fresher one holds, :func:`~.message_parts.rebased`); ``"disagrees"``
    (``check`` says how); ``"unreadable"`` (not a dump of this fabric: ``why``, its quotes of the dump left out);
    ``"not-ready"`` (being written on every read).
    ``routing`` is the dump mapped onto the discovery given; ``reads``: how many times the dump was read.
    """

    verdict: str
    routing: Routing | None = None
    sig: Signature | None = None
    check: LftCheck | None = None
    why: str = ""
    reads: int = 0
    fresh: list[dict] = field(default_factory=list)


class RoutingTracker:
    """Keeps the routing of one discovered fabric in step with its LFT dump and its cabling.

    Parameters
    ----------
    path : Path or None
        Where the LFT dump is (:meth:`CollectorConfig.lfts_file`); None: always computed.
    engine : str
        The fabric's ``routing_engine``, used when there is no usable dump.
    options : dict, optional
        The fabric's ``routing_options`` (OpenSM's guid files as lists; :mod:`fabric_engine.routing.options`).
    rediscover : callable, optional
        Returns a fresh discovery of the fabric (a new ``iblinkinfo``), read again when the dump disagrees
        with the discovery in hand; None: only the dump is read again.
    rereads, wait_s : int, float, optional
        How many times a disagreeing dump (and the discovery) are read again, and the seconds between reads
        (defaults :data:`REREADS`, :data:`REREAD_WAIT_S`).
    objects : callable, optional
        ``objects(changes, holder)``: ``changes`` with the objects of the nodes they name that the fabric in use
        lacks, resolved on ``holder`` (a fresh discovery) with their tenants (:func:`~.message_parts.held` of the
        fabric's row). Default: objects without tenants (named to ``ALL`` only: fail-closed).
    """

    def __init__(self, path: Path | None, engine: str = "minhop", options: dict | None = None, *,
                 rediscover: Callable[[], Fabric] | None = None, rereads: int | None = None,
                 wait_s: float | None = None,
                 objects: Callable[[list[dict], Fabric], list[dict]] | None = None) -> None:
        self.path = path
        self.engine = engine
        self.options = options or {}
        self.rediscover = rediscover
        self.rereads = REREADS if rereads is None else int(rereads)
        self.wait_s = REREAD_WAIT_S if wait_s is None else float(wait_s)
        self.objects = objects or (lambda changes, holder: held(changes, holder, None))
        self.routing: Routing | None = None
        self.source: str | None = None
        self.reason = ""
        self.loaded_sig: Signature | None = None  # dump behind ``routing`` (None: computed)
        self._used: Signature | None = None  # newest dump that was loaded
        self._tried: Signature | None = None  # newest dump refused (disagreeing or unreadable)
        self._deferred: Signature | None = None  # a dump made for a newer discovery: loaded with the next one
        self.t = 0.0  # when the routing in use was made

    # ----------------------------------------------------------------- public
    def on_topology(self, fabric: Fabric, changes: list[dict] | None = None) -> dict | None:
        """Route a (new) discovery ``fabric``; ``changes`` are its topology events against the previous one.

        Returns the event describing the routing now in use (None when the same dump
        was only mapped onto a discovery whose cabling did not change).
        """
        first = self.routing is None
        cabling = [c for c in changes or [] if c["kind"] in ROUTING_CHANGES]
        self._deferred = None
        if dump_signature(self.path) is None:
            why = "no LFT dump configured" if self.path is None else f"no LFT dump at {self.path}"
            return self._compute(fabric, why, cabling, "warning" if self.path is not None else "info")
        j = self.judge(fabric)
        if j.verdict in ("agrees", "newer"):
            quiet = (j.verdict == "agrees" and not first and not cabling and j.sig == self.loaded_sig
                     and self.source == DUMP)
            event = self._use_dump(j.routing, j.sig, "loaded" if first else "reloaded", cabling, judgement=j)
            return None if quiet else event
        if j.verdict == "not-ready":
            return self._compute(fabric, f"{j.why} (read {j.reads} times); will load it once complete", cabling,
                                 "warning")
        self._tried = j.sig
        if j.verdict == "unreadable":
            return self._compute(fabric, f"cannot use the LFT dump: {j.why}", cabling, "warning")
        return self._compute(fabric, f"the LFT dump {self.path} disagrees with this discovery "
                                     f"({self._reads(j.reads)}): {j.check.describe()}", cabling, "warning")

    def poll(self, fabric: Fabric) -> dict | None:
        """Judge the dump again if it changed since it was last tried, loading it when it agrees; the event, or None."""
        sig = dump_signature(self.path)
        if sig is None or sig in (self._used, self._tried, self._deferred):
            return None
        j = self.judge(fabric)
        if j.verdict == "agrees":
            return self._use_dump(j.routing, j.sig, "reloaded", [], why="the dump changed", judgement=j)
        if j.verdict == "not-ready":
            return None  # tried again on a later tick
        if j.verdict == "newer":  # made for the cabling the next sweep will bring: loaded with it
            self._deferred = j.sig
            log.info("LFT dump %s agrees with a fresher discovery (%s) than the one in use: kept for the next sweep",
                     self.path, _summary(j.fresh))
            return None
        self._tried = j.sig
        if j.verdict == "unreadable":
            why = f"cannot use the changed LFT dump ({j.why})"
        else:
            why = (f"the changed LFT dump {self.path} disagrees with the discovery in use ({self._reads(j.reads)}): "
                   f"{j.check.describe()}")
        return self._event("kept", "warning", f"{why}; keeping the routing in use ({self.describe()})")

    def judge(self, fabric: Fabric) -> Judgement:
        """Read the dump and judge its content against ``fabric``; when they disagree, read both again.

        Up to :attr:`rereads` more reads, :attr:`wait_s` apart: the dump (re-mapped only when it changed) and,
        with :attr:`rediscover`, a fresh discovery (the dump is judged against it when its cabling differs).
        """
        last = Judgement("not-ready", why=f"{self.path}: not found")
        for attempt in range(self.rereads + 1):
            if attempt:
                time.sleep(self.wait_s)
            reads = attempt + 1
            try:
                text, sig = read_dump_text(self.path)
            except DumpNotReady as exc:
                last = Judgement("not-ready", why=str(exc), reads=reads)
                continue
            if sig != last.sig or last.verdict != "disagrees":
                try:
                    routing = opensm_lfts.read(text, fabric, str(self.path))
                except FabricEngineError as exc:  # perhaps cut at a table's end while written: read again
                    log.info("LFT dump %s unreadable (read %d): %s", self.path, reads, exc)
                    last = Judgement("unreadable", sig=sig, why=_reader_error(exc, fabric), reads=reads)
                    continue
                check = check_lfts(routing)
                if check.ok:
                    return Judgement("agrees", routing, sig, check, reads=reads)
                last = Judgement("disagrees", routing, sig, check, reads=reads)
            last.reads = reads
            fresh = self._fresh_changes(fabric)
            if fresh and self._agrees(text, fresh[0]):  # its changes quoted on ``fabric``, what the event is about
                quoted = self.objects(rebased(fresh[1], fabric), fresh[0])
                return dataclasses.replace(last, verdict="newer", fresh=quoted)
        return last

    def describe(self) -> str:
        """What routes now: ``"OpenSM LFT dump <path>"`` or ``"minhop computed"``."""
        if self.routing is None:
            return "nothing yet"
        return f"OpenSM LFT dump {self.path}" if self.source == DUMP else f"{self.routing.engine} computed"

    def status(self) -> dict:
        """The routing in use as JSON: source, engine, dump path and time, reason, dump health."""
        r = self.routing
        info = r.info if r is not None else {}
        out = {"source": self.source, "engine": r.engine if r is not None else None,
               "path": str(self.path) if self.path else None, "reason": self.reason, "since": self.t}
        if self.source == DUMP and self.loaded_sig is not None:
            out["dump_mtime"] = self.loaded_sig[1] / 1e9
            out.update({k: info.get(k) for k in ("unmapped_entries", "switches_missing", "dead_entries")})
        return out

    # ---------------------------------------------------------------- helpers
    def _reads(self, n: int) -> str:
        """How often the dump (and the discovery) were read, for a message."""
        return f"the dump read {n} times" + (", the discovery as often" if self.rediscover is not None else "")

    def _fresh_changes(self, fabric: Fabric) -> tuple[Fabric, list[dict]] | None:
        """A fresh discovery and its cabling changes from ``fabric`` (None: none to be had, or the same cabling)."""
        if self.rediscover is None:
            return None
        try:
            fresh = self.rediscover()
        except (FabricEngineError, RuntimeError, OSError) as exc:  # CollectorError is a RuntimeError
            log.warning("LFT dump %s: the discovery could not be read again (%s)", self.path, exc)
            return None
        changes = [c for c in diff_topology(fabric, fresh) if c["kind"] in ROUTING_CHANGES]
        return (fresh, changes) if changes else None

    def _agrees(self, text: str, fabric: Fabric) -> bool:
        """Whether the dump ``text`` agrees with ``fabric`` (a fresh discovery)."""
        try:
            return check_lfts(opensm_lfts.read(text, fabric, str(self.path))).ok
        except FabricEngineError:
            return False

    def _use_dump(self, routing: Routing, sig: Signature, action: str, cabling: list[dict],
                  why: str = "", judgement: Judgement | None = None) -> dict:
        check = judgement.check if judgement is not None and judgement.check is not None else check_lfts(routing)
        routing.info["dead_entries"] = check.dead
        self.routing, self.source, self.loaded_sig, self._used, self._tried = routing, DUMP, sig, sig, sig
        self.t = time.time()
        notes, quoted = [], cabling[:_MOST]
        if cabling:
            notes.append(f"after {_summary(cabling)}")
        elif why:
            notes.append(why)
        if judgement is not None and judgement.verdict == "newer":  # this discovery is the older one
            quoted = quoted + judgement.fresh[:_MOST]
            notes.append(f"the dump agrees with a fresh discovery ({_summary(judgement.fresh)}), newer than the "
                         f"discovery in use, where {check.describe()}; the next sweep brings that cabling")
        self.reason = "; ".join(notes)
        severity = "warning" if not check.ok and (judgement is None or judgement.verdict != "newer") else "info"
        message = f"LFTs {action} from {self.path}" + (f": {self.reason}" if self.reason else "")
        return self._event(action, severity, message, quoted)

    def _compute(self, fabric: Fabric, why: str, cabling: list[dict], severity: str) -> dict:
        engine = self.engine
        try:
            routing = route(fabric, engine, **engine_options(engine, self.options))
        except FabricEngineError as exc:
            why += f"; {engine} refused the discovered fabric ({exc})"
            engine, severity = "minhop", "warning"
            routing = route(fabric, engine)
        first = self.routing is None
        self.routing, self.source, self.loaded_sig, self.reason = routing, COMPUTED, None, why
        self.t = time.time()
        action = "computed" if first else "rerouted"
        cause = f" after {_summary(cabling)}" if cabling else ""
        return self._event(action, severity, f"{'routed' if first else 're-routed'} with {engine}{cause}: {why}",
                           cabling)

    def _event(self, action: str, severity: str, message: str, cabling: list[dict] | None = None) -> dict:
        """The event; the changes it quotes are parts of it (``text``, ``nodes``, ``gone``: :mod:`.message_parts`)."""
        return {"kind": "routing", "action": action, "severity": severity, "source": self.source,
                "engine": self.routing.engine if self.routing is not None else None,
                "path": str(self.path) if self.path else None, "message": message, "t": round(time.time(), 3),
                **templated(message, cabling or [])}


# ------------------------------------------------------------------ status for the admin and the API
def publish_status(fabric_id: int, status: dict) -> str:
    """Store what the fabric routes with now (the LFTs go into the runtime record); returns a new version."""
    version = f"{time.time_ns():x}"
    store.put_routing_status(fabric_id, {**status, "version": version})
    return version
