"""Read-only API of a fabric's live side: link history, rollups, routed paths and the links of jobs.

Routes (under ``/api/fabrics/``)::

    fabrics/<slug>/links/<d>/history/?seconds=300     recent series of directed link d and its reverse (ring buffer)
    fabrics/<slug>/links/<d>/rollups/?minutes=60      one-minute rollups of directed link d (database)
    fabrics/<slug>/ports/<node>/<port>/history/       the series of the link leaving a port and of the one entering it
    fabrics/<slug>/ports/<node>/<port>/rollups/       the rollups of the link leaving a port (node: name or GUID)
    fabrics/<slug>/path/?src=<host>&dst=<host>        the routed path, hop by hop, as ibtracert shows it
    fabrics/<slug>/jobs/                              every job of the catalog: tenant, hosts, directed links
    fabrics/<slug>/routing/                           the routing report (routing_views.py)

History and rollups follow **link identities** (:mod:`ibweb.live.history.link_identity`), not directed-link
indices, which a cabling change renumbers: ``links/<d>/`` reads the identity of ``d`` in the current
topology (the newest tick's) through every topology of the ring and every stored minute, with gaps
(``null``) where the cable did not exist; ``ports/<node>/<port>/`` follows the port, whatever it is
cabled to. Both name the identity (``tx``, ``rx``: GUID, port and node name, as the user may see
them: a hidden host reads ``host-<i>`` with GUID ``hidden``) and list ``recabled``: the times the
transmitting port's peer changed (``{"t", "from", "to"}``, ``from`` and ``to`` the peers).

What is missing reads as missing, never as zero (issue 35). History: a value is ``null`` where
the tick had no measurement or the cable was down, and ``down`` (``reverse_down``) says which
ticks were down; a tick that never came (engine stopped) is absent, so a gap in ``t`` longer than
``tick_s`` is a gap. Rollups: each minute says ``coverage_s`` (seconds measured) and ``down_s``
(seconds down); its means and peak are over the covered seconds (``null`` when none); a minute
with no tick at all is absent.

Paths, ports and jobs come from the fabric's runtime record (:mod:`ibweb.runtime.record`),
which its engine's leader publishes: the fabric, routing and job catalog the engine runs on,
whatever the kind of fabric (a telemetry-fed one routes with OpenSM's LFT dump or a routing
computed on the discovery). Nothing is built here; before the engine published, these
answer 503.
"""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta

import numpy as np
from django.shortcuts import get_object_or_404
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema
from rest_framework.exceptions import APIException, NotFound, ValidationError
from rest_framework.response import Response
from rest_framework.views import APIView

from fabric_engine.errors import RoutingError
from fabric_engine.formats import HCA_SUFFIX
from fabric_engine.routing import Routing
from fabric_engine.topology import KIND_HOST
from fabric_engine.topology import Fabric as EngineFabric
from fabric_engine.topology.limits import MAX_NODE_PORTS
from ibweb.access import HIDDEN, HIDDEN_NODE, Redaction, host_label, job_tenants, redaction, view_of, visible_fabrics
from ibweb.fabrics.models import Fabric
from ibweb.live.history import ring as history
from ibweb.live.history.link_identity import LinkIdentities, db_guid, guid_from_db, guid_text, port_key
from ibweb.live.models import FABRIC_WIDE, LinkRollup
from ibweb.runtime import record

__all__ = ["LinkHistoryView", "LinkRollupsView", "PortHistoryView", "PortRollupsView", "PathView", "JobsView",
           "link_history", "NotPublished"]


class NotPublished(APIException):
    """The fabric's engine has not published its runtime record (yet): try again in a moment."""

    status_code = 503
    default_code = "not_published"


class _FabricView(APIView):
    """A read-only view of one fabric the user may see."""

    def fabric(self, request, slug: str) -> Fabric:
        return get_object_or_404(visible_fabrics(view_of(request.user)), slug=slug)

    def head(self, fabric: Fabric) -> dict:
        """The newest head of ``fabric``'s runtime record; 503 while its engine has not published one."""
        h = record.head_of(fabric)
        if h is None:
            raise NotPublished(f"fabric {fabric.slug}: its engine has not published the fabric yet; try again "
                               f"in a few seconds")
        return h

    def engine_fabric(self, fabric: Fabric) -> EngineFabric:
        """The fabric ``fabric``'s engine runs on (emulated: its scenario's; telemetry-fed: the discovery)."""
        f = record.fabric(fabric.pk, self.head(fabric))
        if f is None:
            raise NotPublished(f"fabric {fabric.slug}: its record is being replaced; try again")
        return f

    def routing(self, fabric: Fabric) -> Routing:
        """The routing ``fabric``'s engine runs on, read from its runtime record."""
        routing = record.routing(fabric.pk, self.head(fabric))
        if routing is None:
            raise NotPublished(f"fabric {fabric.slug} has no routing yet: its engine has not routed it")
        return routing


def _number(request, name: str, default: float, low: float, high: float) -> float:
    raw = request.query_params.get(name)
    if raw is None:
        return default
    try:
        value = float(raw)
    except ValueError:
        raise ValidationError({name: f"expected a number, got {raw!r}"}) from None
    if not low <= value <= high:
        raise ValidationError({name: f"{value:g} is outside {low:g}..{high:g}"})
    return value


def _rounded(a: np.ndarray, digits: int) -> list[float | None]:
    """``a`` rounded, gaps (NaN) as None."""
    out = np.round(a.astype(np.float64), digits).astype(object)
    out[np.isnan(a)] = None
    return out.tolist()


def _published(fabric: Fabric) -> tuple[dict, EngineFabric] | None:
    """The head and engine fabric of ``fabric``'s runtime record, or None before its engine published."""
    h = record.head_of(fabric)
    f = record.fabric(fabric.pk, h) if h is not None else None
    return (h, f) if f is not None else None


def _current(fabric: Fabric) -> tuple[LinkIdentities | None, int | None]:
    """The topology ``links/<d>/`` counts in: the ring's newest tick's (its identities, or None when recorded
    without them, and its directed links), else the published record's; ``(None, None)`` when neither."""
    run = history.newest(fabric.pk)
    if run is not None:
        return history.topology(fabric.pk, run[0]), run[1]
    published = _published(fabric)
    if published is None:
        return None, None
    h, f = published
    return history.topology(fabric.pk, h["base"], f), 2 * f.num_links


class _Ends:
    """The ends of link identities as a view sees them, named from ``tables`` (topologies, the current one
    first, then older ones for nodes gone since)."""

    def __init__(self, tables: list[LinkIdentities], shown: Redaction) -> None:
        self.tables, self.shown = tables, shown

    def end(self, guid: int, port: int) -> dict:
        """``{"guid", "port", "node"}`` of a port; a hidden host reads ``host-<i>`` (its index in the current
        topology; ``hidden node`` if it has left it) and GUID ``hidden``; a node of no known topology is
        hidden below the ``ALL`` view."""
        g = np.array([guid], dtype=np.uint64)
        for k, ids in enumerate(self.tables):  # newest topology first
            i = int(ids.node_index(g)[0])
            if i < 0:
                continue
            if self.shown.hidden_hosts(ids.node_host[i:i + 1], g)[0]:
                return {"guid": HIDDEN, "port": int(port), "node": host_label(i) if k == 0 else HIDDEN_NODE}
            return {"guid": guid_text(guid), "port": int(port), "node": str(ids.node_name[i])}
        if self.shown.shows_all:
            return {"guid": guid_text(guid), "port": int(port), "node": None}
        return {"guid": HIDDEN, "port": int(port), "node": HIDDEN_NODE}

    def pair(self, key) -> tuple[dict | None, dict | None]:
        """``tx`` and ``rx`` of an :data:`~ibweb.live.history.link_identity.IDENTITY` scalar (None: no link)."""
        if key is None:
            return None, None
        return self.end(int(key["tx_guid"]), int(key["tx_port"])), self.end(int(key["rx_guid"]), int(key["rx_port"]))

    def recablings(self, changes: list[history.Recabling]) -> list[dict]:
        return [{"t": round(c.t, 3), "from": self.pair(c.before)[1], "to": self.pair(c.after)[1]} for c in changes]


def _ends(request, fabric: Fabric, current: LinkIdentities | None, topology: EngineFabric | None = None) -> _Ends:
    """The :class:`_Ends` of ``fabric`` for the request's user: the current topology, then the ring's."""
    tables = [current] if current is not None else []
    tables += [ids for ids in history.known(fabric.pk) if ids is not current]
    return _Ends(tables, redaction(view_of(request.user), fabric, topology))


def _window(fabric: Fabric, seconds: float) -> float:
    """The time after which the last ``seconds`` of the ring start."""
    idx = history.index(fabric.pk)
    return (idx["t"][-1] if idx and idx["t"] else time.time()) - seconds


def _series_payload(s: history.Series, fabric: Fabric) -> dict:
    """``seq``, ``t``, ``rate``, ``util`` and ``down`` of column 0, ``reverse_*`` of column 1 if any, and
    ``tick_s`` (the seconds one tick stands for: a longer gap in ``t`` had no tick)."""
    tick_s = history.tick_seconds(history.index(fabric.pk))
    out = {"seq": s.seq.tolist(), "t": np.round(s.t, 3).tolist(), "tick_s": tick_s,
           "rate": _rounded(s.rate[:, 0], 3), "util": _rounded(s.util[:, 0], 5), "down": s.down[:, 0].tolist()}
    if s.rate.shape[1] > 1:
        out.update(reverse_rate=_rounded(s.rate[:, 1], 3), reverse_util=_rounded(s.util[:, 1], 5),
                   reverse_down=s.down[:, 1].tolist())
    return out


def link_history(fabric: Fabric, d: int, seconds: float, request=None) -> dict:
    """The history payload of directed link ``d`` of the current topology and its reverse over the last ``seconds``.

    Both are followed by identity through every topology of the ring (``null``: the cable did not exist);
    without identities (ticks recorded without a topology) by position within the newest topology's ticks.
    ``request``: names the ends for its user (``tx``, ``rx`` and ``recabled``; left out without it).
    """
    ids, n = _current(fabric)
    if n is not None and not 0 <= d < n:
        raise NotFound(f"link {d} is outside 0..{n - 1}")
    after = _window(fabric, seconds)
    reverse = (d + n // 2) % n if n else None
    links = [d] if reverse is None else [d, reverse]
    s = history.series(fabric.pk, links if ids is None else ids.keys[links], after=after)
    out = {"fabric": fabric.slug, "link": d, "reverse": reverse, "seconds": seconds, **_series_payload(s, fabric)}
    if request is not None:
        out.update(tx=None, rx=None, recabled=[], reverse_recabled=[])
        if ids is not None:
            ends = _ends(request, fabric, ids)
            key, back = ids.keys[d], ids.keys[reverse]
            out["tx"], out["rx"] = ends.pair(key)
            out["recabled"] = ends.recablings(history.recablings(fabric.pk, key["tx_guid"], key["tx_port"], after))
            out["reverse_recabled"] = ends.recablings(history.recablings(fabric.pk, back["tx_guid"], back["tx_port"],
                                                                         after))
    return out


@extend_schema(responses=OpenApiTypes.OBJECT)
class LinkHistoryView(_FabricView):
    """Recent series (rate in Gb/s, utilization) of a directed link and of its reverse, from the ring buffer,
    by the link's identity in the current topology."""

    def get(self, request, slug: str, link: int):
        seconds = _number(request, "seconds", 300.0, 1.0, 86400.0)
        return Response(link_history(self.fabric(request, slug), link, seconds, request))


class _PortView(_FabricView):
    """A view of one port, ``node`` a name, a ``0x`` node or port GUID, or the ``host-<i>`` label of a hidden host
    (or the node GUID of a node only the ring's older topologies have)."""

    def port(self, request, slug: str, node: str, port: int) -> tuple[Fabric, _Ends, LinkIdentities, int, str]:
        """The fabric, the ends' names, the current topology's identities, the node's GUID and its name as the
        user sees it; 404 for a node the user may not see or a port not cabled now nor in the ring."""
        fabric = self.fabric(request, slug)
        h, f = self.head(fabric), self.engine_fabric(fabric)
        current = history.topology(fabric.pk, h["base"], f)
        ends = _ends(request, fabric, current, f)
        hidden = ends.shown.hidden_nodes(f)
        i = _node(f, node, hidden)
        guid, name = (int(f.guid[i]), _name(f, i, hidden)) if i is not None else (_gone_guid(node), None)
        if i is None and guid is not None:
            seen = ends.end(guid, 1)
            guid, name = (None, None) if seen["guid"] == HIDDEN or seen["node"] is None else (guid, seen["node"])
        if guid is None:
            raise NotFound(f"no node {node!r} in fabric {fabric.slug}")
        key = port_key(guid, port) if 1 <= port <= MAX_NODE_PORTS else None
        if key is None or all(ids.find_ports(key)[0] < 0 for ids in ends.tables):
            raise NotFound(f"port {port} of {node} is not cabled")
        return fabric, ends, current, guid, name


def _gone_guid(node: str) -> int | None:
    """The GUID ``node`` spells (``0x`` and up to 16 hex digits), or None."""
    try:
        guid = int(node, 16) if node.lower().startswith("0x") else -1
    except ValueError:
        return None
    return guid if 0 <= guid < 2**64 else None


def _peer(ends: _Ends, guid: int, port: int):
    """The newest identity of the link leaving a port among the known topologies (None: never cabled)."""
    key = port_key(guid, port)
    for ids in ends.tables:  # newest first
        d = int(ids.find_ports(key)[0])
        if d >= 0:
            return ids.keys[d]
    return None


@extend_schema(responses=OpenApiTypes.OBJECT)
class PortHistoryView(_PortView):
    """Recent series of the directed link leaving a port (column ``rate``, ``util``) and of the one entering it
    (``reverse_*``), whatever the port is cabled to: ``recabled`` lists each change of its peer."""

    def get(self, request, slug: str, node: str, port: int):
        seconds = _number(request, "seconds", 300.0, 1.0, 86400.0)
        fabric, ends, current, guid, name = self.port(request, slug, node, port)
        after = _window(fabric, seconds)
        d = int(current.find_ports(port_key(guid, port))[0])
        tx, rx = ends.pair(_peer(ends, guid, port))
        return Response({"fabric": fabric.slug, "node": name, "port": port, "link": d if d >= 0 else None,
                         "reverse": int(current.reverse(d)) if d >= 0 else None, "seconds": seconds,
                         **_series_payload(history.port_series(fabric.pk, guid, port, after), fabric),
                         "tx": tx, "rx": rx,
                         "recabled": ends.recablings(history.recablings(fabric.pk, guid, port, after))})


# ----------------------------------------------------------------------------------------------- rollups
def _since(request) -> datetime:
    minutes = _number(request, "minutes", 60.0, 1.0, 7 * 24 * 60.0)
    return datetime.now(tz=UTC) - timedelta(minutes=minutes)


def _minutes(fabric: Fabric, since: datetime, rows: list[tuple]) -> dict:
    """The rollups payload of the minutes after ``since`` from ``rows`` ``(minute, mean_util, max_util,
    mean_rate_gbps, samples, coverage_s, down_s)``, one list per field, a minute per rolled-up minute.

    A minute the engine had no tick of is absent (no data, never zero). Per minute: ``coverage_s``
    seconds measured and ``down_s`` seconds down (the rest of the 60 s had no tick: unknown);
    ``mean_util``, ``max_util`` and ``mean_rate_gbps`` over the covered seconds only, ``null`` when
    there are none. A rolled-up minute without a row of the link was idle and fully measured: zeros
    over the fabric-wide coverage. Several rows of one minute (a port re-cabled during it) are
    averaged by their samples; their coverage adds up, their down time is the least of theirs.
    """
    marks = {m: (n, c) for m, n, c in LinkRollup.objects.filter(
        fabric=fabric, minute__gte=since, link=FABRIC_WIDE, tx_guid__isnull=True)
        .values_list("minute", "samples", "coverage_s")}
    order = sorted(marks)
    acc: dict[datetime, list] = {}
    for minute, mean_util, max_util, rate, samples, coverage, down in rows:  # a row per minute, rarely two
        a = acc.setdefault(minute, [0.0, None, 0.0, 0, 0.0, 60.0])
        if samples:
            a[0] += mean_util * samples
            a[1] = max_util if a[1] is None else max(a[1], max_util)
            a[2] += rate * samples
        a[3] += samples
        a[4] += coverage
        a[5] = min(a[5], down)
    out: dict[str, list] = {k: [] for k in ("minute", "samples", "coverage_s", "down_s", "mean_util", "max_util",
                                            "mean_rate_gbps")}
    for m in order:  # the window's minutes
        a = acc.get(m)
        if a is None:  # idle, measured as long as the fabric was (not at all: no value)
            samples, coverage, down = marks[m][0], marks[m][1], 0.0
            mean = peak = rate = 0.0 if samples else None
        else:
            samples, coverage, down = a[3], min(a[4], 60.0), a[5]
            mean, peak, rate = (a[0] / a[3], a[1], a[2] / a[3]) if a[3] else (None, None, None)
        out["minute"].append(m.isoformat())
        out["samples"].append(samples)
        out["coverage_s"].append(round(coverage, 3))
        out["down_s"].append(round(down, 3))
        out["mean_util"].append(None if mean is None else round(mean, 5))
        out["max_util"].append(None if peak is None else round(peak, 5))
        out["mean_rate_gbps"].append(None if rate is None else round(rate, 3))
    return out


_ROW = ("minute", "mean_util", "max_util", "mean_rate_gbps", "samples", "coverage_s", "down_s")


def _port_rows(fabric: Fabric, since: datetime, guid: int, port: int) -> tuple[list[tuple], np.ndarray]:
    """The rollup rows of the link leaving a port (whatever its peer), oldest first, and their peers
    (``rx_guid`` uint64, ``rx_port``) as an array of pairs ``[R, 2]`` (object)."""
    rows = list(LinkRollup.objects.filter(fabric=fabric, minute__gte=since, tx_guid=db_guid(guid), tx_port=port)
                .order_by("minute", "rx_guid", "rx_port").values_list(*_ROW, "rx_guid", "rx_port"))
    k = len(_ROW)
    peers = np.array([(int(guid_from_db(r[k])), r[k + 1]) for r in rows], dtype=object).reshape(-1, 2)
    return [r[:k] for r in rows], peers


def _recabled_rows(ends: _Ends, rows: list[tuple], peers: np.ndarray) -> list[dict]:
    """Each minute whose row's peer differs from the row before (idle minutes have no row: the change is
    placed at the first minute the new peer carried traffic)."""
    changed = np.flatnonzero((peers[1:] != peers[:-1]).any(axis=1)) + 1 if len(peers) > 1 else np.zeros(0, int)
    return [{"t": rows[i][0].timestamp(), "minute": rows[i][0].isoformat(),
             "from": ends.end(*peers[i - 1]), "to": ends.end(*peers[i])} for i in changed.tolist()]


@extend_schema(responses=OpenApiTypes.OBJECT)
class LinkRollupsView(_FabricView):
    """One-minute rollups of a directed link of the current topology, by its identity (``link=-1``: the
    fabric-wide rows); idle minutes read as zero, uncovered ones as ``null`` (:func:`_minutes`)."""

    def get(self, request, slug: str, link: int):
        fabric = self.fabric(request, slug)
        since = _since(request)
        out = {"fabric": fabric.slug, "link": link}
        ids, n = _current(fabric) if link != FABRIC_WIDE else (None, None)
        if link != FABRIC_WIDE and n is not None and not 0 <= link < n:
            raise NotFound(f"link {link} is outside 0..{n - 1}")
        if ids is None:  # the fabric-wide rows, or rows recorded without a topology
            rows = list(LinkRollup.objects.filter(fabric=fabric, minute__gte=since, link=link, tx_guid__isnull=True)
                        .values_list(*_ROW))
            return Response({**out, **_minutes(fabric, since, rows)})
        key = ids.keys[link]
        ends = _ends(request, fabric, ids)
        rows, peers = _port_rows(fabric, since, int(key["tx_guid"]), int(key["tx_port"]))
        mine = [r for r, p in zip(rows, peers.tolist(), strict=True) if p == [int(key["rx_guid"]), int(key["rx_port"])]]
        tx, rx = ends.pair(key)
        return Response({**out, "tx": tx, "rx": rx, **_minutes(fabric, since, mine),
                         "recabled": _recabled_rows(ends, rows, peers)})


@extend_schema(responses=OpenApiTypes.OBJECT)
class PortRollupsView(_PortView):
    """One-minute rollups of the directed link leaving a port, whatever it is cabled to; ``recabled`` lists the
    minutes its peer changed."""

    def get(self, request, slug: str, node: str, port: int):
        since = _since(request)
        fabric, ends, current, guid, name = self.port(request, slug, node, port)
        rows, peers = _port_rows(fabric, since, guid, port)
        d = int(current.find_ports(port_key(guid, port))[0])
        tx, rx = ends.pair(_peer(ends, guid, port))
        return Response({"fabric": fabric.slug, "node": name, "port": port, "link": d if d >= 0 else None,
                         "tx": tx, "rx": rx, **_minutes(fabric, since, rows),
                         "recabled": _recabled_rows(ends, rows, peers)})

@extend_schema(responses=OpenApiTypes.OBJECT)
class PathView(_FabricView):
    """The routed path from host ``src`` to host ``dst`` (names or node indices), hop by hop."""

    def get(self, request, slug: str):
        fabric = self.fabric(request, slug)
        routing = self.routing(fabric)
        f = routing.fabric
        hidden = redaction(view_of(request.user), fabric, f).hidden_nodes(f)
        ends = []
        for name in ("src", "dst"):
            raw = request.query_params.get(name, "")
            if not raw:
                raise ValidationError({name: "required: a host name or node index"})
            i = _index(raw) if _is_index(raw) else _host_by_name(f, raw, name, fabric.slug, hidden)
            if not (0 <= i < f.num_nodes and f.kind[i] == KIND_HOST):
                raise ValidationError({name: f"{raw!r} is not a host of fabric {fabric.slug}"})
            ends.append(i)
        try:
            hops = routing.trace(ends[0], ends[1])
        except RoutingError as exc:
            detail = f"no route from {_name(f, ends[0], hidden)} to {_name(f, ends[1], hidden)}" \
                if hidden.any() else str(exc)
            return Response({"detail": detail, "src": ends[0], "dst": ends[1], "hops": [], "links": []}, status=409)
        hops = [{**h, "name": _name(f, h["node"], hidden)} for h in hops]
        return Response({"fabric": fabric.slug, "src": ends[0], "dst": ends[1], "hops": hops,
                         "links": [h["link"] for h in hops if h["link"] is not None], "routing": routing.engine})


def _is_index(raw: str) -> bool:
    return raw.isascii() and raw.isdigit()


def _index(raw: str) -> int:
    return int(raw) if len(raw) < 19 else -1


def _name(f, i: int, hidden: np.ndarray) -> str:
    """Name of node ``i`` as the user sees it (``hidden``: :meth:`ibweb.access.Redaction.hidden_nodes`)."""
    return host_label(i) if hidden[i] else str(f.node_name[i])


def _node(f, key: str, hidden: np.ndarray) -> int | None:
    """Node index of ``key`` (a name, a ``0x`` node or port GUID, or the ``host-<i>`` label of a hidden host);
    ``None`` when there is no such node, or only a hidden one named by its real name or GUID."""
    label = key.removeprefix("host-")
    if key.startswith("host-") and _is_index(label) and 0 <= _index(label) < f.num_nodes and hidden[_index(label)]:
        return _index(label)
    try:
        i = f.node(int(key, 16) if key.lower().startswith("0x") else key)
    except (KeyError, ValueError, OverflowError):
        return None
    return None if hidden[i] else i


def _host_by_name(f, raw: str, field: str, slug: str, hidden: np.ndarray) -> int:
    """Node index of ``raw``; a discovered host is also found without its ``HCA-1``/``mlx5_0`` suffix.

    A ``hidden`` host is found only by its ``host-<i>`` label.
    """
    i = _node(f, raw, hidden)
    if i is not None:
        return i
    hosts = f.hosts[~hidden[f.hosts]]
    short = np.array([HCA_SUFFIX.sub("", str(n)) for n in f.node_name[hosts]], dtype=object)  # only on a miss
    hit = hosts[short == raw]
    if len(hit) == 1:
        return int(hit[0])
    if len(hit) > 1:
        names = ", ".join(str(f.node_name[h]) for h in hit[:4])
        raise ValidationError({field: f"{raw!r} has several HCAs in fabric {slug}: say which ({names})"})
    raise ValidationError({field: f"no node {raw!r} in fabric {slug}"})


@extend_schema(responses=OpenApiTypes.OBJECT)
class JobsView(_FabricView):
    """The jobs of the fabric's catalog: name, tenant, pattern, host node indices and the directed links they cross.

    Emulated fabrics: the scenario's jobs. Telemetry-fed fabrics: what their source carries
    (none without a scheduler feed).
    """

    def get(self, request, slug: str):
        fabric = self.fabric(request, slug)
        h = self.head(fabric)
        catalog = record.jobs(fabric.pk, h) or []
        tenants = job_tenants(view_of(request.user))
        jobs = [{k: j[k] for k in ("id", "tenant", "pattern", "hosts", "links")} for j in catalog
                if tenants is None or j["tenant"] in tenants]
        return Response({"fabric": fabric.slug, "jobs": jobs})
