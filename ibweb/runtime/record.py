"""The runtime record of a fabric: what its engine runs on, published once, read by every process.

The leader of a fabric (:class:`ibweb.live.engine.runner.FabricRunner`) publishes, each time its
topology or routing changes, a new *version* of the record: the
:class:`~fabric_engine.topology.Fabric`, its forwarding tables, its job catalog and its routing report. Path
queries, the jobs API, P_Key member checks, the inventory and ``/metrics`` read it in
whichever process they run; nothing else rebuilds a fabric.

Layout in the shared cache (:func:`~ibweb.runtime.cache.shared_cache`), all values bytes or small dicts::

    ibweb:rt:<fabric>:head                   {"version", "base", "row", "t", "name", "engine", "info", "nodes",
                                              "links", "lft": {"shape", "rows", "chunks"} or None, "jobs": count}
    ibweb:rt:<fabric>:<base>:fabric          zlib(npz) of the fabric's arrays
    ibweb:rt:<fabric>:<base>:lft:<c>         zlib of uint8 LFT rows ``c*rows .. (c+1)*rows - 1`` (switch order)
    ibweb:rt:<fabric>:<base>:report          zlib(JSON) of the routing report (balance, unreachable, credit loops)
    ibweb:rt:<fabric>:<version>:jobs         zlib(JSON) of the job catalog
    ibweb:rt:<fabric>:<version>:tenants      zlib(JSON) {"policy": policy version, "tenants": {id: {"slug", "name",
                                              "nodes": [host index], "guids": [host node GUID]}}}

The LFT of a 32,768-GPU fabric is ~100 MB raw (2,600 switches x 37,000 LIDs): chunked by
switch rows and compressed, a path query reads only the chunks of the switches it crosses
(:class:`ChunkedLft`). A new version's parts are written before the head that names it;
the parts of the version it replaces expire a minute later, so a reader that read the old
head still finds them.

A new job catalog alone (a scheduler started or ended a job) makes a new version too, but
a cheap one (:func:`publish_jobs`): only its ``jobs`` and ``tenants`` parts are written, and its
head names in ``base`` the version whose fabric, LFT and report parts it keeps
(:func:`fabric_version`; ``base`` is the version itself after :func:`publish`). Readers
decode those once per base, so a new catalog costs them the catalog only.

``row`` (primary key and creation time of the fabric row) keeps a record of a deleted fabric
from answering for a new one with the same key.

The tenant host sets (which hosts each tenant's partitions hold, resolved on the version's
fabric) change with the tenancy rows, not with the topology: the leader rewrites that one
part of its current version whenever the fabric's policy version changes
(:func:`publish_tenants`), and readers take it only while its policy version is the current
one (:func:`tenant_hosts`; :func:`ibweb.access.redaction` reads the database otherwise).

Readers decode a version once per process (:func:`fabric`, :func:`routing`, :func:`jobs`):
one memo keyed by (fabric, version, part), bounded, where the version is the one that wrote
the part (the base for the fabric, the routing and the report).
"""

from __future__ import annotations

import io
import json
import math
import threading
import time
import zlib
from dataclasses import dataclass

import numpy as np
from cachetools import LRUCache

from fabric_engine.routing import Routing
from fabric_engine.topology import Fabric

from .cache import shared_cache

__all__ = ["publish", "publish_jobs", "fabric_version", "head", "head_of", "fabric", "routing", "full_routing", "jobs",
           "routing_report", "row_identity", "ChunkedLft", "forget", "LFT_CHUNK_BYTES", "forget_memo",
           "publish_tenants", "tenant_hosts", "TenantHosts"]

#: Raw bytes of LFT per chunk (rows of whole switches; at least one switch per chunk).
LFT_CHUNK_BYTES = 512 * 1024
_TTL_S = None  # the leader rewrites the record when it changes; forget() drops it
_GRACE_S = 60  # how long the parts of a replaced version stay readable
_LEVEL = 1  # zlib level: LFTs and node arrays compress 10-50x already at level 1, several times faster than 6
_FABRIC_ARRAYS = ("kind", "guid", "lid", "nports", "role", "tier", "group", "port_lid", "port_guid", "a_node", "a_port",
                  "b_node", "b_port", "width", "speed", "length_m")


def _key(fabric_id: int, part: str) -> str:
    return f"ibweb:rt:{fabric_id}:{part}"


def row_identity(row) -> str:
    """What ties a record to one fabric row: its primary key and creation time."""
    created = getattr(row, "created", None)
    return f"{row.pk}:{created.timestamp() if created is not None else ''}"


# ------------------------------------------------------------------ encoding
def encode_fabric(f: Fabric) -> bytes:
    buf = io.BytesIO()
    np.savez(buf, **{k: np.asarray(getattr(f, k)) for k in _FABRIC_ARRAYS},
             names=np.frombuffer(json.dumps([str(n) for n in f.node_name]).encode(), dtype=np.uint8),
             meta=np.frombuffer(json.dumps({"name": f.name, "meta": f.meta}, default=str).encode(), dtype=np.uint8))
    return zlib.compress(buf.getvalue(), _LEVEL)


def decode_fabric(blob: bytes) -> Fabric:
    with np.load(io.BytesIO(zlib.decompress(blob))) as z:
        arrays = {k: z[k] for k in _FABRIC_ARRAYS}
        names = json.loads(z["names"].tobytes())
        meta = json.loads(z["meta"].tobytes())
    for a in arrays.values():
        a.flags.writeable = False
    node_name = np.array(names, dtype=object)
    node_name.flags.writeable = False
    return Fabric(name=meta["name"], node_name=node_name, meta=meta["meta"], **arrays)


def _lft_rows(shape: tuple[int, int]) -> int:
    return max(1, LFT_CHUNK_BYTES // max(1, shape[1]))


def encode_lft(lft: np.ndarray) -> tuple[dict, list[bytes]]:
    """``({"shape", "rows", "chunks"}, [compressed chunk, ...])`` of an LFT array."""
    lft = np.ascontiguousarray(lft, dtype=np.uint8)
    rows = _lft_rows(lft.shape)
    blobs = [zlib.compress(lft[lo:lo + rows].tobytes(), _LEVEL) for lo in range(0, lft.shape[0], rows)]
    return {"shape": list(lft.shape), "rows": rows, "chunks": len(blobs)}, blobs


# ------------------------------------------------------------------ writing
def publish(fabric_id: int, row: str, f: Fabric, r: Routing | None, catalog: list[dict] | None = None,
            info: dict | None = None, *, report: dict | None = None, only_if_absent: bool = False) -> str | None:
    """Publish a new version of the record of fabric ``fabric_id``; returns the version.

    Parameters
    ----------
    row : str
        :func:`row_identity` of the fabric row.
    f, r : Fabric, Routing or None
        What the engine runs on (``r`` None: not routed yet).
    catalog : list of dict
        The job catalog: ``{"id", "tenant", "pattern", "hosts": [node], "links": [directed link], "spec": {...}}``.
    info : dict
        Small facts about where it came from (``{"source": "emulated"}``, the routing status, ...).
    report : dict
        The routing report (:func:`fabric_engine.routing.quality.report`, as a dict).
    only_if_absent : bool
        Publish only when the fabric has no record yet (returns None when it has one): a
        reader that derives a record from a fabric's spec never replaces its engine's.
    """
    cache = shared_cache()
    version = f"{time.time_ns():x}"
    parts: dict[str, object] = {_key(fabric_id, f"{version}:fabric"): encode_fabric(f)}
    lft = None
    if r is not None:
        lft, blobs = encode_lft(r.lft)
        parts.update({_key(fabric_id, f"{version}:lft:{c}"): b for c, b in enumerate(blobs)})
    catalog = list(catalog or [])
    parts[_key(fabric_id, f"{version}:jobs")] = zlib.compress(json.dumps(catalog).encode(), _LEVEL)
    parts[_key(fabric_id, f"{version}:report")] = zlib.compress(json.dumps(report).encode(), _LEVEL)
    cache.set_many(parts, _TTL_S)
    old = cache.get(_key(fabric_id, "head"))
    new = {
        "version": version, "base": version, "row": row, "t": time.time(), "name": f.name, "nodes": f.num_nodes,
        "hosts": f.num_hosts, "switches": f.num_switches, "links": f.num_links,
        "engine": r.engine if r is not None else None, "lft": lft, "jobs": len(catalog),
        "info": {**(info or {}), **({k: v for k, v in r.info.items() if _small(v)} if r is not None else {})},
    }
    if only_if_absent:
        if not cache.add(_key(fabric_id, "head"), new, _TTL_S):
            cache.delete_many(list(parts))
            return None
        return version
    cache.set(_key(fabric_id, "head"), new, _TTL_S)
    _retire(fabric_id, old, new)
    return version


def publish_jobs(fabric_id: int, version: str, catalog: list[dict]) -> str | None:
    """Publish a new version of the record that differs from ``version`` in its job catalog only.

    Writes the new ``jobs`` part, carries the ``tenants`` part over (same fabric, same hosts)
    and a head naming both, whose ``base`` keeps the fabric, LFT and report parts of
    ``version``: nothing of the fabric is encoded again, and readers decode it no more.
    Returns the new version, or None (nothing written) when ``version`` is no longer the
    fabric's newest record (the caller then publishes the whole record).
    """
    cache = shared_cache()
    old = cache.get(_key(fabric_id, "head"))
    if old is None or old["version"] != version:
        return None
    new_version = f"{time.time_ns():x}"
    catalog = list(catalog or [])
    parts: dict[str, object] = {
        _key(fabric_id, f"{new_version}:jobs"): zlib.compress(json.dumps(catalog).encode(), _LEVEL)}
    tenants = cache.get(_key(fabric_id, f"{version}:tenants"))
    if tenants is not None:
        parts[_key(fabric_id, f"{new_version}:tenants")] = tenants
    cache.set_many(parts, _TTL_S)
    new = {**old, "version": new_version, "base": fabric_version(old), "t": time.time(), "jobs": len(catalog)}
    cache.set(_key(fabric_id, "head"), new, _TTL_S)
    _retire(fabric_id, old, new)
    return new_version


def fabric_version(h: dict) -> str:
    """The version whose fabric, LFT and routing report parts record head ``h`` reads (its ``base``)."""
    return h.get("base") or h["version"]


def _retire(fabric_id: int, old: dict | None, new: dict) -> None:
    """Let the parts of head ``old`` that head ``new`` does not read expire (readers of ``old`` still find them
    for a while)."""
    if old is None or old["version"] == new["version"]:
        return
    for key in set(_part_keys(fabric_id, old)) - set(_part_keys(fabric_id, new)):
        shared_cache().touch(key, _GRACE_S)


def _small(value) -> bool:
    return isinstance(value, str | int | float | bool | type(None)) or (
        isinstance(value, list | tuple) and len(value) <= 20 and all(isinstance(v, str | int | float) for v in value))


def _part_keys(fabric_id: int, h: dict) -> list[str]:
    v, base = h["version"], fabric_version(h)
    keys = [_key(fabric_id, f"{v}:{p}") for p in ("jobs", "tenants")]
    keys += [_key(fabric_id, f"{base}:{p}") for p in ("fabric", "report")]
    if h.get("lft"):
        keys += [_key(fabric_id, f"{base}:lft:{c}") for c in range(h["lft"]["chunks"])]
    return keys


def publish_tenants(fabric_id: int, version: str, policy: int, tenants: dict[int, dict]) -> bool:
    """Store the tenant host sets of record ``version`` as of policy version ``policy``.

    ``tenants``: ``{tenant id: {"slug", "name", "nodes": [host index], "guids": [host node GUID]}}``
    (:func:`ibweb.access.tenant_host_sets`). Returns False (nothing written) when ``version``
    is no longer the fabric's newest record.
    """
    cache = shared_cache()
    h = cache.get(_key(fabric_id, "head"))
    if h is None or h["version"] != version:
        return False
    body = {"policy": int(policy), "tenants": {str(k): v for k, v in tenants.items()}}
    cache.set(_key(fabric_id, f"{version}:tenants"), zlib.compress(json.dumps(body).encode(), _LEVEL), _TTL_S)
    return True


def forget(fabric_id: int) -> None:
    """Drop the record of a fabric (a deleted fabric; tests)."""
    cache = shared_cache()
    h = cache.get(_key(fabric_id, "head"))
    if h is not None:
        cache.delete_many(_part_keys(fabric_id, h))
    cache.delete(_key(fabric_id, "head"))
    _memo.drop(fabric_id)


# ------------------------------------------------------------------ reading
class _Memo:
    """Decoded parts of records, keyed by ``(fabric, version, part)``; the least recently used go first.

    A :class:`cachetools.LRUCache` of ``size`` entries behind a lock (cachetools' caches are not thread-safe).
    """

    def __init__(self, size: int = 48) -> None:
        self.size = size
        self._items: LRUCache[tuple, object] = LRUCache(maxsize=size)
        self._lock = threading.Lock()

    def get(self, key: tuple, make):
        with self._lock:
            value = self._items.get(key)  # a hit becomes the most recently used
        if value is not None:
            return value
        value = make()  # outside the lock: decoding may take a while; two threads may both decode once
        if value is not None:
            with self._lock:
                self._items[key] = value
        return value

    def drop(self, fabric_id: int) -> None:
        with self._lock:
            for key in [k for k in self._items if k[0] == fabric_id]:
                del self._items[key]

    def clear(self) -> None:
        with self._lock:
            self._items.clear()


_memo = _Memo()


def forget_memo() -> None:
    """Drop every decoded part held by this process (tests)."""
    _memo.clear()


def head(fabric_id: int, row: str | None = None) -> dict | None:
    """The newest head of a fabric's record (None before its engine published, or for another ``row``)."""
    h = shared_cache().get(_key(fabric_id, "head"))
    if h is None or (row is not None and h.get("row") != row):
        return None
    return h


def head_of(row) -> dict | None:
    """The newest head of fabric row ``row``'s record (None before its engine published, or when the record is of
    another row with its key)."""
    return head(row.pk, row_identity(row))


def fabric(fabric_id: int, h: dict) -> Fabric | None:
    """The fabric of record head ``h`` (decoded once per process and version)."""
    base = fabric_version(h)

    def make():
        blob = shared_cache().get(_key(fabric_id, f"{base}:fabric"))
        return decode_fabric(blob) if blob is not None else None

    return _memo.get((fabric_id, base, "fabric"), make)


def _json_part(fabric_id: int, version: str, part: str):
    def make():
        blob = shared_cache().get(_key(fabric_id, f"{version}:{part}"))
        return json.loads(zlib.decompress(blob)) if blob is not None else None

    return _memo.get((fabric_id, version, part), make)


def jobs(fabric_id: int, h: dict) -> list[dict] | None:
    """The job catalog of record head ``h``."""
    return _json_part(fabric_id, h["version"], "jobs")


def routing_report(fabric_id: int, h: dict) -> dict | None:
    """The routing report of record head ``h`` (None: not routed, or no report)."""
    return _json_part(fabric_id, fabric_version(h), "report")


@dataclass(frozen=True, eq=False)
class TenantHosts:
    """One tenant's hosts on a record's fabric: ``nodes`` int64 ``[k]`` (node indices), ``guids`` (node GUIDs)."""

    slug: str
    name: str
    nodes: np.ndarray
    guids: frozenset[int]


def tenant_hosts(fabric_id: int, h: dict, policy: int) -> dict[int, TenantHosts] | None:
    """The tenant host sets of record head ``h`` as of policy version ``policy``, by tenant ID.

    None when the record holds none for that policy version (not yet republished after a
    change, or never published): the caller reads the tenancy rows instead. Tenants without
    a partition on the fabric are not in it.
    """
    def make():
        blob = shared_cache().get(_key(fabric_id, f"{h['version']}:tenants"))
        if blob is None:
            return None
        body = json.loads(zlib.decompress(blob))
        if body.get("policy") != policy:
            return None
        out = {}
        for k, t in body["tenants"].items():
            nodes = np.asarray(t["nodes"], dtype=np.int64)
            nodes.flags.writeable = False
            out[int(k)] = TenantHosts(t["slug"], t["name"], nodes, frozenset(int(g) for g in t["guids"]))
        return out

    return _memo.get((fabric_id, h["version"], f"tenants:{policy}"), make)


@dataclass(frozen=True, eq=False)
class ChunkedLft:
    """A read-only view of a published LFT that fetches the chunks of the switch rows it is indexed with.

    It stands for the ``uint8 [switches, lids]`` array of a :class:`~fabric_engine.routing.Routing`
    where only rows are picked (``lft[rows, lids]`` with integer arrays, as path walks do), so
    that tracing one path reads a few chunks, not the whole table. ``np.asarray`` loads it all.
    """

    fabric_id: int
    version: str
    shape: tuple[int, int]
    rows: int
    dtype = np.dtype(np.uint8)

    @property
    def ndim(self) -> int:
        return 2

    def chunk(self, c: int) -> np.ndarray:
        def make():
            blob = shared_cache().get(_key(self.fabric_id, f"{self.version}:lft:{c}"))
            if blob is None:
                raise LookupError(f"fabric {self.fabric_id}: LFT chunk {c} of record {self.version} is gone")
            return np.frombuffer(zlib.decompress(blob), dtype=np.uint8).reshape(-1, self.shape[1])

        return _memo.get((self.fabric_id, self.version, f"lft:{c}"), make)

    def __getitem__(self, key):
        rows, cols = key if isinstance(key, tuple) else (key, slice(None))
        r = np.asarray(rows, dtype=np.int64)
        if isinstance(cols, slice):  # whole rows
            flat = r.ravel()
            out = np.empty((flat.size, self.shape[1]), dtype=np.uint8)
            chunks = flat // self.rows
            for c in np.unique(chunks):  # a loop over the few chunks a walk touches
                sel = chunks == c
                out[sel] = self.chunk(int(c))[flat[sel] - c * self.rows]
            return out.reshape(*r.shape, self.shape[1])[..., cols]
        r, k = np.broadcast_arrays(r, np.asarray(cols, dtype=np.int64))
        out = np.empty(r.shape, dtype=np.uint8)
        chunks = r // self.rows
        for c in np.unique(chunks):  # a loop over the few chunks a walk touches
            sel = chunks == c
            out[sel] = self.chunk(int(c))[r[sel] - c * self.rows, k[sel]]
        return out if out.ndim else out[()]

    def __array__(self, dtype=None, copy=None):
        whole = np.concatenate([self.chunk(c) for c in range(math.ceil(self.shape[0] / self.rows))])
        return whole if dtype is None else whole.astype(dtype)


def routing(fabric_id: int, h: dict) -> Routing | None:
    """The routing of record head ``h`` on its fabric, with an LFT read chunk by chunk (None: not routed)."""
    if not h.get("lft"):
        return None
    f = fabric(fabric_id, h)
    if f is None:
        return None
    lft, base = h["lft"], fabric_version(h)

    def make():
        return Routing(f, ChunkedLft(fabric_id, base, tuple(lft["shape"]), lft["rows"]), h["engine"],
                       dict(h.get("info", {})))

    return _memo.get((fabric_id, base, "routing"), make)


def full_routing(fabric_id: int, h: dict) -> Routing | None:
    """The routing of record head ``h`` with its whole LFT in memory (analyses walk many paths)."""
    lazy = routing(fabric_id, h)
    if lazy is None:
        return None
    return Routing(lazy.fabric, np.asarray(lazy.lft), lazy.engine, dict(lazy.info))
