"""The routing of a telemetry-fed fabric: the subnet manager's LFT dump when there is one, else computed.

OpenSM writes its unicast forwarding tables to ``opensm-lfts.dump`` in its dump
directory (``dump_files_dir``: ``--dump_files_dir``, else ``$OSM_TMP_DIR``, else ``/var/log``;
``osm_subnet.c``) at the end of every routing pass when the routing log bit ``0x40`` of
``-D`` is on (``osm_dump.c``, ``osm_dump_all``), one table per switch, each closed by
``"<n> lids dumped"``. It overwrites the file in place, so a read is kept only when the file
did not change while it was read and ends with that footer; otherwise it is tried again on
a later tick.

:class:`RoutingTracker` decides what the engine routes with:

* a discovery (first or new): the dump, mapped onto the discovered fabric, when
  one exists; when the discovery changed the cabling (link down/up, node gone or
  new) and the dump has not changed since the routing in use was loaded, the dump
  describes the old cabling, so the fabric is re-routed with its ``routing_engine``
  instead (OpenSM has not re-swept yet, or its dump is not where we look);
* every tick: a dump whose modification time or size changed is loaded again;
* no dump: computed with the fabric's ``routing_engine`` (``minhop`` by default;
  an engine that refuses the discovered topology falls back to ``minhop``).

Every change yields one event (``{"kind": "routing", "action", "source", "engine",
"path", "severity", "message", "t"}``) naming what happened and why.

The routing in use goes into the fabric's runtime record (:mod:`ibweb.runtime.record`,
published by the fabric runner), where the web processes' path queries read it;
:func:`publish_status` keeps the small description the admin and the API show.
"""

from __future__ import annotations

import re
import time
from pathlib import Path

import numpy as np

from fabric_engine.errors import FabricEngineError
from fabric_engine.formats import opensm_lfts
from fabric_engine.routing import NO_PATH, Routing, route
from fabric_engine.routing.options import engine_options
from fabric_engine.topology import Fabric

from . import store

__all__ = ["RoutingTracker", "DumpNotReady", "dump_signature", "read_dump", "dead_entries", "publish_status",
           "ROUTING_CHANGES"]

#: Topology event kinds that change which paths exist (width and speed changes do not).
ROUTING_CHANGES = frozenset({"link_down", "link_up", "node_vanished", "node_appeared"})
DUMP = "opensm-dump"
COMPUTED = "computed"
_FOOTER = re.compile(r"\d+ (?:valid )?lids dumped\s*\Z")

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


def read_dump(fabric: Fabric, path: Path) -> tuple[Routing, Signature]:
    """The LFTs in ``path`` mapped onto ``fabric``, and the signature of the file read.

    Raises :class:`DumpNotReady` while the file is being written and
    :class:`~fabric_engine.errors.FormatError` (naming file and line) when it is not a dump of this fabric.
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
    return opensm_lfts.read(text, fabric, str(path)), after


def dead_entries(routing: Routing, block: int = 64) -> int:
    """LFT entries toward a LID of the fabric that leave through an uncabled port (a dump older than the cabling).

    Vectorized over blocks of ``block`` switches, so the temporaries stay small on a large subnet.
    """
    f = routing.fabric
    width = f.max_lid + 1
    known = f.lid_to_node[:width] >= 0
    # cabled[s, p]: port p of switch s leads somewhere (port 0, the switch itself, and NO_PATH count as fine)
    nodes = f.switches
    ports = np.arange(256)
    slot = f.port_offset[nodes][:, None] + np.clip(ports - 1, 0, None)[None, :]
    inside = (ports[None, :] >= 1) & (ports[None, :] <= f.nports[nodes][:, None])
    cabled = inside & (f.port_out_link[np.clip(slot, 0, len(f.port_out_link) - 1)] >= 0)
    cabled[:, 0] = cabled[:, NO_PATH] = True
    dead = 0
    for lo in range(0, len(nodes), block):  # a loop over switch blocks, each vectorized
        lft = routing.lft[lo:lo + block, :width]
        ok = np.take_along_axis(cabled[lo:lo + block], lft.astype(np.intp), axis=1)
        dead += int((~ok & known[None, :]).sum())
    return dead


def _summary(changes: list[dict], most: int = 3) -> str:
    shown = "; ".join(c["message"] for c in changes[:most])
    return shown + (f" (+{len(changes) - most} more)" if len(changes) > most else "")


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
    """

    def __init__(self, path: Path | None, engine: str = "minhop", options: dict | None = None) -> None:
        self.path = path
        self.engine = engine
        self.options = options or {}
        self.routing: Routing | None = None
        self.source: str | None = None
        self.reason = ""
        self.loaded_sig: Signature | None = None  # dump behind ``routing`` (None: computed)
        self._used: Signature | None = None  # newest dump that was loaded (it may be stale now)
        self._tried: Signature | None = None  # newest dump that was tried, loaded or refused
        self.t = 0.0  # when the routing in use was made

    # ----------------------------------------------------------------- public
    def on_topology(self, fabric: Fabric, changes: list[dict] | None = None) -> dict | None:
        """Route a (new) discovery ``fabric``; ``changes`` are its topology events against the previous one.

        Returns the event describing the routing now in use (None when the same dump
        was only mapped onto a discovery whose cabling did not change).
        """
        first = self.routing is None
        cabling = [c for c in changes or [] if c["kind"] in ROUTING_CHANGES]
        sig = dump_signature(self.path)
        stale = bool(cabling) and sig is not None and sig == self._used
        if sig is not None and not stale:
            try:
                routing, sig = read_dump(fabric, self.path)
            except DumpNotReady as exc:
                return self._compute(fabric, f"{exc}; will load it once complete", cabling, "warning")
            except FabricEngineError as exc:
                self._tried = sig
                return self._compute(fabric, f"cannot use the LFT dump: {exc}", cabling, "warning")
            quiet = not first and not cabling and sig == self.loaded_sig and self.source == DUMP
            event = self._use_dump(routing, sig, "loaded" if first else "reloaded", cabling)
            return None if quiet else event
        if self.path is None:
            why = "no LFT dump configured"
        elif sig is None:
            why = f"no LFT dump at {self.path}"
        else:
            why = f"the LFT dump {self.path} has not changed since the cabling did (OpenSM has not re-routed yet)"
        return self._compute(fabric, why, cabling, "warning" if self.path is not None else "info")

    def poll(self, fabric: Fabric) -> dict | None:
        """Load the dump again if it changed since it was last tried; returns the event, or None."""
        sig = dump_signature(self.path)
        if sig is None or sig in (self._used, self._tried):
            return None
        try:
            routing, sig = read_dump(fabric, self.path)
        except DumpNotReady:
            return None
        except FabricEngineError as exc:
            self._tried = sig
            return self._event("kept", "warning", f"cannot use the changed LFT dump ({exc}); keeping the routing "
                                                  f"in use ({self.describe()})")
        return self._use_dump(routing, sig, "reloaded", [], why="the dump changed")

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
    def _use_dump(self, routing: Routing, sig: Signature, action: str, cabling: list[dict],
                  why: str = "") -> dict:
        dead = dead_entries(routing)
        routing.info["dead_entries"] = dead
        self.routing, self.source, self.loaded_sig, self._used, self._tried = routing, DUMP, sig, sig, sig
        self.t = time.time()
        notes = []
        if cabling:
            notes.append(f"after {_summary(cabling)}")
        elif why:
            notes.append(why)
        if routing.info.get("switches_missing"):
            notes.append(f"no table for {', '.join(routing.info['switches_missing'][:5])}")
        if dead:
            notes.append(f"{dead} entries lead to uncabled ports (dump older than the discovery?)")
        self.reason = "; ".join(notes)
        severity = "warning" if dead or routing.info.get("switches_missing") else "info"
        message = f"LFTs {action} from {self.path}" + (f": {self.reason}" if self.reason else "")
        return self._event(action, severity, message)

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
        return self._event(action, severity, f"{'routed' if first else 're-routed'} with {engine}{cause}: {why}")

    def _event(self, action: str, severity: str, message: str) -> dict:
        return {"kind": "routing", "action": action, "severity": severity, "source": self.source,
                "engine": self.routing.engine if self.routing is not None else None,
                "path": str(self.path) if self.path else None, "message": message, "t": round(time.time(), 3)}


# ------------------------------------------------------------------ status for the admin and the API
def publish_status(fabric_id: int, status: dict) -> str:
    """Store what the fabric routes with now (the LFTs go into the runtime record); returns a new version."""
    version = f"{time.time_ns():x}"
    store.put_routing_status(fabric_id, {**status, "version": version})
    return version
