"""The at-scale backend: VictoriaMetrics, written with Prometheus remote write, read with MetricsQL.

Each series is the metric ``ibweb_port_<series>`` with three labels: ``fabric`` (the fabric row's id), ``guid``
(the port's node GUID, ``0x`` and 16 hex digits) and ``port`` (its number). No label changes per tick (no peer,
no job, no name): a port is one time series per metric for its whole life, re-cabled or not, so the active series
are ports x metrics (about 200k x 30 at 32,768 GPUs). Retention and compression are the server's
(``-retentionPeriod``, set from ``IBWEB_TSDB_RETENTION_DAYS`` in ``compose.yaml``); VictoriaMetrics keeps full
resolution for the whole retention.

Reads: ``range`` and ``ports_of_switch`` ask ``/api/v1/query_range`` for ``avg_over_time(metric[w])``
(``max_over_time``, ``min_over_time`` by the series' aggregation) at ``start + w, start + 2w, ... end``: each
point covers ``(t - w, t]``, the bin that starts at ``t - w``. ``top`` asks ``/api/v1/query`` at ``end`` for
``topk`` (``bottomk`` for ``min`` series) of the series over ``(start, end]``. ``nocache=1`` keeps answers out of
VictoriaMetrics' rollup cache (and its alignment of ``start`` to the step). Open-source VictoriaMetrics does not
downsample: a 90-day chart reads every raw sample of its port (about 780k at 10 s), which it does fast. ``stats``
asks ``count_over_time``, ``sum_over_time`` and ``max_over_time`` in the same bins, ``fabric_stats`` their ``sum``
and ``max`` over the fabric's ports, computed by the server.

While the server cannot be reached (or answers 5xx), the encoded requests of each sweep wait in a bounded backlog
in memory (``backlog_bytes``) and are sent again, in order, before the next sweep's: a minute of outage loses
nothing. Past the bound the oldest sweeps go first, counted in ``dropped`` and logged. A request the server refuses
(4xx) would be refused again: it is dropped and raised.

``sweeps_per_request`` (``IBWEB_TSDB_SWEEPS_PER_REQUEST``) sweeps of a fabric are held and sent together, each
port's labels once for its samples of them all: the server parses a sample's labels once per request, not per
sample. Measured (``tests/bench/bench_tsdb.py``, 196,608 ports x 32 series at 32,768 GPUs, 10 s sweeps, 6 sweeps a
request, load average 12 on 2 cores): the client's encode and send 3.1% of a core (6.0% before each port's samples
were laid out in two strided copies and the body compressed without a copy to bytes), the server's ingest 51%.
What is held is readable once sent.
"""

from __future__ import annotations

import json
import logging
import math
import threading
import urllib.error
import urllib.parse
import urllib.request
from collections import deque
from collections.abc import Mapping, Sequence

import numpy as np

from .remote_write import HEADERS, PortLabels, compressed, write_request_array
from .series import PORT_ID, checked_sweep, port_ids, series_of
from .store import TOP, FabricStats, Range, Ranges, Stats, SwitchRange, bin_edges, fabric_list, top_order

__all__ = ["METRIC_PREFIX", "VictoriaStore", "TsdbError"]

log = logging.getLogger(__name__)

METRIC_PREFIX = "ibweb_port_"
#: The MetricsQL rollup of each aggregation.
ROLLUP = {"mean": "avg_over_time", "max": "max_over_time", "min": "min_over_time"}
#: Samples per remote-write request (VictoriaMetrics' default -maxInsertRequestSize is 32 MB uncompressed).
BATCH = 100_000


class TsdbError(RuntimeError):
    """The time-series server refused or failed a request (the message names the URL and its answer);
    ``retry``: it may succeed later (unreachable, 5xx)."""

    def __init__(self, message: str, retry: bool = False) -> None:
        super().__init__(message)
        self.retry = retry


class VictoriaStore:
    """:class:`~.store.TimeSeriesStore` on the VictoriaMetrics single node (or ``vminsert``/``vmselect``) at ``url``."""

    def __init__(self, url: str, *, retention_days: int = 90, timeout: float = 30.0,
                 backlog_bytes: int = 1 << 30, sweeps_per_request: int = 1) -> None:
        self.url = url.rstrip("/")
        self.retention_days = retention_days
        self.timeout = timeout
        self.backlog_bytes = int(backlog_bytes)
        self.dropped = 0
        self.sweeps_per_request = max(1, int(sweeps_per_request))
        self._held: dict[int, list[tuple[np.ndarray, int, dict[str, np.ndarray]]]] = {}  # per fabric, not encoded
        self._lock = threading.RLock()  # one store for every fabric's writer thread
        self._backlog: deque[tuple[float, deque[bytes], int]] = deque()  # (t, requests not yet sent, bytes)
        self._labels: dict[tuple[int, int], tuple[bytes, PortLabels]] = {}

    # -- HTTP ----------------------------------------------------------------------------------------------
    def _request(self, path: str, *, body: bytes | None = None, headers: Mapping[str, str] | None = None,
                 params: Mapping[str, object] | None = None) -> bytes:
        url = f"{self.url}{path}" + (f"?{urllib.parse.urlencode(params)}" if params else "")
        req = urllib.request.Request(url, data=body, headers=dict(headers or {}), method="POST" if body else "GET")
        try:
            with urllib.request.urlopen(req, timeout=self.timeout) as resp:
                return resp.read()
        except urllib.error.HTTPError as exc:
            raise TsdbError(f"{url}: HTTP {exc.code}: {exc.read()[:500].decode(errors='replace')}",
                            retry=exc.code >= 500) from exc
        except (urllib.error.URLError, OSError) as exc:
            raise TsdbError(f"{url}: {exc}", retry=True) from exc

    def _query(self, path: str, params: Mapping[str, object]) -> list[dict]:
        params = {**params, "nocache": 1}
        if len(str(params.get("query", ""))) > 2048:  # a long selector (many ports): a form, not a URL
            answer = json.loads(self._request(path, body=urllib.parse.urlencode(params).encode(),
                                              headers={"Content-Type": "application/x-www-form-urlencoded"}))
        else:
            answer = json.loads(self._request(path, params=params))
        if answer.get("status") != "success":
            raise TsdbError(f"{self.url}{path}: {answer.get('errorType')}: {answer.get('error')}")
        return answer["data"]["result"]

    # -- writes --------------------------------------------------------------------------------------------
    def _port_labels(self, fabric: int, batch: int, keys: np.ndarray) -> PortLabels:
        """The encoded labels of a batch of ports, kept while the batch's ports stay the same."""
        fingerprint = keys.tobytes()
        cached = self._labels.get((fabric, batch))
        if cached is None or cached[0] != fingerprint:
            cached = (fingerprint, PortLabels(fabric, keys["guid"], keys["port"]))
            self._labels[(fabric, batch)] = cached
        return cached[1]

    def write(self, fabric_id: int, t: float, ports: np.ndarray, values: Mapping[str, np.ndarray]) -> None:
        """Send one sweep as remote-write requests of at most :data:`BATCH` ports, after the backlog's; kept in the
        backlog while the server is unreachable; :class:`TsdbError` if refused (4xx). With ``sweeps_per_request``
        above 1 the sweeps of a fabric's same ports are held and sent together, each port's labels once for all
        their samples (readable once sent)."""
        keys, values = checked_sweep(ports, values)
        fabric = int(fabric_id)
        with self._lock:
            held = self._held.setdefault(fabric, [])
            if held and not np.array_equal(held[0][0], keys):
                self._encode_held(fabric)
            self._held.setdefault(fabric, []).append((keys, int(round(t * 1000)), values))
            if len(self._held[fabric]) >= self.sweeps_per_request:
                self._encode_held(fabric)
                self.flush()

    def _encode_held(self, fabric: int) -> None:
        """The held sweeps of ``fabric`` into the backlog, as one request per series and batch of ports."""
        held = self._held.pop(fabric, None)
        if not held:
            return
        keys = held[0][0]
        times = np.array([h[1] for h in held], dtype=np.int64)
        names = list(dict.fromkeys(name for h in held for name in h[2]))
        bodies: deque[bytes] = deque()
        for lo in range(0, len(keys), BATCH):
            labels = self._port_labels(fabric, lo // BATCH, keys[lo:lo + BATCH])
            hi = min(lo + BATCH, len(keys))
            for name in names:
                stacked = np.column_stack([h[2][name][lo:hi] if name in h[2] else np.full(hi - lo, np.nan)
                                           for h in held])  # [ports, sweeps]
                body = write_request_array(METRIC_PREFIX + name, labels, stacked, times)
                if len(body):
                    bodies.append(compressed(body))
        self._backlog.append((float(times[-1]) / 1000, bodies, sum(len(b) for b in bodies)))
        self._bound()

    def backlog(self) -> tuple[int, int]:
        """Sweeps and bytes waiting to be sent."""
        return len(self._backlog), sum(b for _, _, b in self._backlog)

    def _bound(self) -> None:
        total = sum(b for _, _, b in self._backlog)
        while total > self.backlog_bytes and len(self._backlog) > 1:
            t, _, size = self._backlog.popleft()
            total -= size
            self.dropped += 1
            log.warning("%s: backlog over %d bytes: sweep of t=%.3f dropped (%d so far)", self.url,
                        self.backlog_bytes, t, self.dropped)

    def flush(self, held: bool = False) -> bool:
        """Send the backlog in order (``held``: the held sweeps too); True when it is empty, False when the server
        is still unreachable."""
        with self._lock:
            for fabric in list(self._held) if held else ():
                self._encode_held(fabric)
            return self._send()

    def _send(self) -> bool:
        while self._backlog:
            t, bodies, _ = self._backlog[0]
            while bodies:
                try:
                    self._request("/api/v1/write", body=bodies[0], headers=HEADERS)
                except TsdbError as exc:
                    if exc.retry:
                        log.warning("%s unreachable, %d sweeps kept to send again: %s", self.url,
                                    len(self._backlog), exc)
                        return False
                    bodies.popleft()
                    if not bodies:
                        self._backlog.popleft()
                    raise
                bodies.popleft()
            self._backlog.popleft()
        return True

    # -- reads ---------------------------------------------------------------------------------------------
    @staticmethod
    def _selector(series: str, **labels: str) -> str:
        inner = ",".join(f'{k}{"=~" if k == "fabric" and "|" in v else "="}"{v}"' for k, v in labels.items())
        return f"{METRIC_PREFIX}{series}{{{inner}}}"

    def _binned(self, expr_of, start: float, end: float,
                points: int) -> tuple[np.ndarray, list[tuple[dict, np.ndarray]]]:
        edges, width = bin_edges(start, end, points)
        step = f"{max(width, 0.001):.3f}s"
        result = self._query("/api/v1/query_range", {"query": expr_of(step), "start": f"{start + width:.3f}",
                                                     "end": f"{end:.3f}", "step": step})
        out = []
        for item in result:
            values = np.full(points, np.nan)
            t = np.array([float(v[0]) for v in item["values"]])
            v = np.array([float(v[1]) for v in item["values"]])
            idx = np.rint((t - start) / width).astype(np.int64) - 1
            ok = (idx >= 0) & (idx < points)
            values[idx[ok]] = v[ok]
            out.append((item["metric"], values))
        return edges, out

    def range(self, fabric_id: int, port: tuple[int, int], series: str, start: float, end: float,
              points: int) -> Range:
        """Port ``(guid, port)``'s ``series`` in ``points`` bins."""
        agg = series_of(series).agg
        sel = self._selector(series, fabric=str(int(fabric_id)), guid=f"0x{int(port[0]):016x}", port=str(int(port[1])))
        edges, found = self._binned(lambda step: f"{ROLLUP[agg]}({sel}[{step}])", start, end, points)
        return Range(edges, found[0][1] if found else np.full(points, np.nan))

    def ports_of_switch(self, fabric_id: int, guid: int, series: str, start: float, end: float,
                        points: int) -> SwitchRange:
        """Every port of node ``guid`` with samples in the window, side by side."""
        agg = series_of(series).agg
        sel = self._selector(series, fabric=str(int(fabric_id)), guid=f"0x{int(guid):016x}")
        edges, found = self._binned(lambda step: f"{ROLLUP[agg]}({sel}[{step}])", start, end, points)
        found.sort(key=lambda item: int(item[0]["port"]))
        ports = np.array([int(m["port"]) for m, _ in found], dtype=np.uint16)
        values = np.array([v for _, v in found]).reshape(len(found), points)
        return SwitchRange(ports, edges, values)

    def _picked(self, fabric_id: int, keys: np.ndarray, series: str, rollup: str, start: float, end: float,
                points: int) -> tuple[np.ndarray, np.ndarray]:
        """``rollup`` (a MetricsQL ``*_over_time``) of ports ``keys`` in chart bins, in their order (NaN: no sample):
        one query for their nodes' GUIDs, the ports asked picked from its answer. Bin starts and ``[P, points]``."""
        edges, _ = bin_edges(start, end, points)
        values = np.full((len(keys), points), np.nan)
        if not len(keys):
            return edges, values
        guids = "|".join(f"0x{int(g):016x}" for g in np.unique(keys["guid"]).tolist())  # the nodes, not the ports
        inner = f'fabric="{int(fabric_id)}",guid=~"{guids}"'
        edges, found = self._binned(lambda step: f"{rollup}({METRIC_PREFIX}{series}{{{inner}}}[{step}])",
                                    start, end, points)
        if not found:
            return edges, values
        got = np.array([(int(m["guid"], 16), int(m["port"])) for m, _ in found], dtype=PORT_ID)  # the answer's
        _, inverse = np.unique(np.concatenate([got, keys]), return_inverse=True)
        where = np.full(int(inverse.max()) + 1, -1, dtype=np.int64)
        where[inverse[:len(got)]] = np.arange(len(got))
        take = where[inverse[len(got):]]
        values[take >= 0] = np.array([v for _, v in found])[take[take >= 0]]
        return edges, values

    def ranges(self, fabric_id: int, ports: np.ndarray, series: str, start: float, end: float,
               points: int) -> Ranges:
        """Ports ``ports`` (:data:`~.series.PORT_ID`) side by side, in their order (all NaN: no sample): one query
        for their nodes' GUIDs, the ports asked picked from its answer."""
        keys = port_ids(ports)
        edges, values = self._picked(fabric_id, keys, series, ROLLUP[series_of(series).agg], start, end, points)
        return Ranges(keys, edges, values)

    def stats(self, fabric_id: int, ports: np.ndarray, series: str, start: float, end: float,
              points: int) -> Stats:
        """Ports ``ports`` side by side in ``points`` bins: ``count_over_time``, ``sum_over_time`` and
        ``max_over_time`` of each (three queries; a sample is one sweep, ``sample_s`` None)."""
        series_of(series)
        keys = port_ids(ports)
        edges, count = self._picked(fabric_id, keys, series, "count_over_time", start, end, points)
        _, total = self._picked(fabric_id, keys, series, "sum_over_time", start, end, points)
        _, peak = self._picked(fabric_id, keys, series, "max_over_time", start, end, points)
        n = np.nan_to_num(count).astype(np.int64)
        with np.errstate(invalid="ignore", divide="ignore"):
            mean = np.where(n > 0, total / n, np.nan)
        return Stats(keys, edges, n, mean, np.where(n > 0, peak, np.nan), np.where(n > 0, total, np.nan), None)

    def fabric_stats(self, fabric_id: int, series: str, start: float, end: float, points: int) -> FabricStats:
        """Every port of the fabric together in ``points`` bins: the server aggregates over the ports (``sum`` and
        ``max`` of ``count_over_time``, ``sum_over_time``, ``max_over_time``; five queries, one series each)."""
        series_of(series)
        sel = self._selector(series, fabric=str(int(fabric_id)))
        exprs = {"count": "sum(count_over_time({s}))", "sweeps": "max(count_over_time({s}))",
                 "sum": "sum(sum_over_time({s}))", "max": "max(max_over_time({s}))",
                 "short": "max(count_over_time({s}) - sum_over_time({s}))"}
        out: dict[str, np.ndarray] = {}
        edges, _ = bin_edges(start, end, points)
        for key, expr in exprs.items():
            edges, found = self._binned(lambda step, e=expr: e.format(s=f"{sel}[{step}]"), start, end, points)
            out[key] = found[0][1] if found else np.full(points, np.nan)
        count = np.nan_to_num(out["count"]).astype(np.int64)
        seen = count > 0
        return FabricStats(edges, count, np.nan_to_num(out["sweeps"]).astype(np.int64),
                           *(np.where(seen, out[k], np.nan) for k in ("sum", "max", "short")), None)

    def top(self, fabric_ids: int | Sequence[int], series: str, start: float, end: float, n: int) -> np.ndarray:
        """The ``n`` ports of ``fabric_ids`` highest in ``series`` over the window (``min``: lowest), :data:`TOP`."""
        agg = series_of(series).agg
        bin_edges(start, end, 1)
        fabrics = "|".join(str(f) for f in fabric_list(fabric_ids))
        rank = "bottomk" if agg == "min" else "topk"
        window = f"{max(end - start, 0.001):.3f}s"
        expr = f"{rank}({int(n)}, {ROLLUP[agg]}({self._selector(series, fabric=fabrics)}[{window}]))"
        result = self._query("/api/v1/query", {"query": expr, "time": f"{end:.3f}"})
        rows = np.empty(len(result), dtype=TOP)
        for i, item in enumerate(result):
            m = item["metric"]
            value = float(item["value"][1])
            rows[i] = (int(m["fabric"]), int(m["guid"], 16), int(m["port"]), value if math.isfinite(value) else np.nan)
        return top_order(rows, n, agg == "min")

    def close(self) -> None:
        """Send what is held and waiting (a last try), and forget the encoded labels."""
        try:
            self.flush(held=True)
        except TsdbError as exc:
            log.warning("%s: %s", self.url, exc)
        if self._backlog:
            log.warning("%s: closed with %d sweeps not sent", self.url, len(self._backlog))
        self._labels.clear()
