"""Link downs as evidence: successive observations of port state turned into down episodes, all ports at once.

Each call of :meth:`DownTracker.observe` is one sweep (or one batch of log events): per port identity
(port GUID and number) the time, whether the port is up (logical and physical state; -1: not read) and its
``LinkDownedCounter`` (NaN: not read). A port seen up and then down opens an episode; seen up again, it
closes it. Where only sweeps are known each end is an interval (last seen up .. first seen down, last seen
down .. first seen up), so the duration is an interval too (``duration_lo`` .. ``duration_hi``); an
observation marked ``exact`` (a trap's own time) makes that end a point. A port up at both sweeps whose
``LinkDownedCounter`` rose went down and came back in between: that is a down of unknown duration, at
most the sweep interval (``evidence`` :data:`COUNTER`). ``downs`` is how many downs an episode holds
(the counter's rise over it, at least 1). The counter is 8 bits wide and saturates (IBA PortCounters):
at 255 further downs are not counted; a smaller value than before means it was cleared, and the new value
is the rise since (a lower bound).

A down proven longer than the job-killing time (default 7 s, NCCL's InfiniBand timeout) is
``critical``; one that may have been (its upper bound is longer) is ``critical_possible``. Per port,
:meth:`DownTracker.status` gives the downs and the downtime (proven and at most) over the last 24 h and
7 days; two or more downs in 24 h is the ``repeated_downs`` condition. State stays bounded: at most
``max_episodes`` closed episodes per port, none ended more than ``keep_s`` (7 days) ago.

An observation may give a ``tag`` function: called with the rows that open an episode (a port seen going down, a
counter-only down), it gives each an integer the episode keeps as ``tag`` (-1: none), what was known at that
moment (the jobs on the link: :mod:`.down_jobs`). Per port, ``downs_total`` counts every down seen since the
tracker started (a Prometheus counter: never lowered by the pruning of old episodes).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from .port_slots import PortSlots, column

__all__ = ["STATE", "COUNTER", "EXACT", "DownsConfig", "DownTracker", "DAY_S", "WEEK_S", "link_episodes"]

#: Evidence bits of an episode: a sweep saw the port down; its LinkDownedCounter rose; an end's time is exact.
STATE, COUNTER, EXACT = 1, 2, 4
DAY_S, WEEK_S = 86_400.0, 7 * 86_400.0
_EPISODE_FIELDS = ("slot", "start_lo", "start_hi", "end_lo", "end_hi", "ldc_before", "ldc_after", "downs",
                   "evidence", "tag")
_INT_FIELDS = ("slot", "downs", "tag")


@dataclass(frozen=True)
class DownsConfig:
    """Settings: job-killing time, downs in 24 h that make ``repeated_downs``, bounds, the counter's saturation."""

    critical_s: float = 7.0
    repeated: int = 2
    max_episodes: int = 32
    keep_s: float = WEEK_S
    counter_max: float = 255.0  # LinkDownedCounter saturates here (8 bits); inf for a counter that does not


class DownTracker:
    """Down episodes of every port from successive observations (see the module's description)."""

    def __init__(self, config: DownsConfig | None = None) -> None:
        self.config = config or DownsConfig()
        self.slots = PortSlots(remember=False)  # after the first, an observation has the changed ports only
        n = 0
        self._state = np.zeros(n, np.int8)  # -1 never read, 0 down, 1 up
        self._last_t = np.zeros(n)
        self._last_up = np.zeros(n)  # last time seen up (NaN: never)
        self._last_down = np.zeros(n)  # last time seen down in the open episode
        self._start_lo = np.zeros(n)
        self._start_hi = np.zeros(n)
        self._ldc = np.zeros(n)  # last LinkDownedCounter read
        self._ldc_before = np.zeros(n)  # counter at the last up observation before the open episode
        self._open_ev = np.zeros(n, np.uint8)
        self._open_tag = np.zeros(n, np.int64)  # tag of the open episode (-1: none)
        self._total = np.zeros(n, np.int64)  # downs seen since the tracker started
        self._ep = {f: np.zeros(0, np.int64 if f in _INT_FIELDS else np.uint8 if f == "evidence"
                                else np.float64) for f in _EPISODE_FIELDS}
        self._count = np.zeros(n, np.int64)  # closed episodes kept per slot
        self.now = -np.inf
        self._changes = 0  # observations and retags so far: what the episodes kept were made of
        self._episodes: tuple[int, float, dict[str, np.ndarray]] | None = None

    # ------------------------------------------------------------------ state
    def _grow(self) -> None:
        n, old = len(self.slots), self._state.size
        if n <= old:
            return
        extra = n - old
        fill = {"_state": -1, "_open_ev": 0, "_count": 0, "_open_tag": -1, "_total": 0}
        for name in ("_state", "_last_t", "_last_up", "_last_down", "_start_lo", "_start_hi", "_ldc", "_ldc_before",
                     "_open_ev", "_count", "_open_tag", "_total"):
            arr = getattr(self, name)
            setattr(self, name, np.concatenate([arr, np.full(extra, fill.get(name, np.nan), arr.dtype)]))

    def _append(self, **cols: np.ndarray) -> None:
        if not cols["slot"].size:
            return
        for f in _EPISODE_FIELDS:
            self._ep[f] = np.concatenate([self._ep[f], cols[f].astype(self._ep[f].dtype)])
        self._count += np.bincount(cols["slot"], minlength=self._count.size)

    def _prune(self) -> None:
        ep, cfg = self._ep, self.config
        if not ep["slot"].size:
            return
        old = ep["end_hi"] < self.now - cfg.keep_s
        if not old.any() and self._count.max(initial=0) <= cfg.max_episodes:
            return
        order = np.lexsort((-ep["end_hi"], ep["slot"]))  # per slot, newest first
        slot = ep["slot"][order]
        first = np.r_[0, np.flatnonzero(slot[1:] != slot[:-1]) + 1]
        rank = np.arange(slot.size) - np.repeat(first, np.diff(np.r_[first, slot.size]))
        keep = order[(rank < cfg.max_episodes) & ~old[order]]
        keep.sort()
        self._ep = {f: v[keep] for f, v in ep.items()}
        self._count = np.bincount(self._ep["slot"], minlength=self._state.size).astype(np.int64)

    def _delta(self, before: np.ndarray, after: np.ndarray) -> np.ndarray:
        """Rise of a saturating counter from ``before`` to ``after``: a fall is a clear (the rise since is
        ``after``); NaN where either is unread or ``before`` had saturated."""
        d = np.where(after >= before, after - before, after)
        return np.where(np.isnan(before) | np.isnan(after) | (before >= self.config.counter_max), np.nan, d)

    # ---------------------------------------------------------------- observe
    def observe(self, t, guid, port, up, link_downed=None, exact=None,
                tag: Callable[[np.ndarray], np.ndarray] | None = None) -> None:
        """One sweep: arrays of length n (``t`` may be one time for all). ``up``: 1/True up, 0/False down,
        -1 not read (the row is ignored); ``link_downed``: LinkDownedCounter (NaN: not read); ``exact``: the
        row's time is the time the state changed (a trap), not only when it was seen; ``tag``: row indices
        (into these arrays) of the rows that open an episode -> an integer each, kept by the episode."""
        guid = column("guid", guid, None, "i")
        n = guid.size
        port = column("port", port, n, "i")
        if n and (port.min() < 0 or port.max() > 255):
            raise ValueError("port: port numbers must be 0..255")
        up = column("up", up, n, "b").astype(np.int8)
        if n and (up.min() < -1 or up.max() > 1):
            raise ValueError("up: values must be -1 (not read), 0 (down) or 1 (up)")
        t = np.asarray(t, np.float64)
        if t.ndim == 0:
            t = np.full(n, float(t))
        t = column("t", t, n, "f")
        if not np.isfinite(t).all():
            raise ValueError("t: times must be finite")
        ldc = np.full(n, np.nan) if link_downed is None else column("link_downed", link_downed, n, "f").astype(
            np.float64)
        if (ldc < 0).any():
            raise ValueError("link_downed: counter values must be >= 0")
        exact = np.zeros(n, bool) if exact is None else column("exact", exact, n, "b").astype(bool)
        s = self.slots.lookup(guid, port)
        self._grow()
        known = up >= 0
        if (known & (t < np.where(self._state[s] >= 0, self._last_t[s], -np.inf))).any():
            raise ValueError("t: an observation older than the port's last one")
        rows = np.arange(n)
        if not known.all():
            s, t, up, ldc, exact, rows = s[known], t[known], up[known], ldc[known], exact[known], rows[known]
        self._changes += 1
        self._step(s, t, up, ldc, exact, rows, tag)
        if t.size:
            self.now = max(self.now, float(t.max()))
        self._prune()

    def _step(self, s: np.ndarray, t: np.ndarray, up: np.ndarray, ldc: np.ndarray, exact: np.ndarray,
              rows: np.ndarray, tag: Callable[[np.ndarray], np.ndarray] | None) -> None:
        prev = self._state[s]
        old_ldc = self._ldc[s]
        rise = self._delta(old_ldc, ldc)
        went_down = (up == 0) & (prev != 0)
        went_up = (up == 1) & (prev == 0)
        flap = (up == 1) & (prev == 1) & (rise > 0)  # down and back between two sweeps: only the counter saw it
        tags = np.full(s.size, -1, np.int64)
        opening = np.flatnonzero(went_down | flap)
        if tag is not None and opening.size:
            tags[opening] = np.asarray(tag(rows[opening]), np.int64)

        if flap.any():
            i = np.flatnonzero(flap)
            si, lo, hi = s[i], self._last_t[s[i]], t[i]
            self._append(slot=si, start_lo=lo, start_hi=hi, end_lo=lo, end_hi=hi, ldc_before=old_ldc[i],
                         ldc_after=ldc[i], downs=rise[i], evidence=np.full(i.size, COUNTER), tag=tags[i])
            self._total[si] += rise[i].astype(np.int64)
        if went_up.any():
            i = np.flatnonzero(went_up)
            si = s[i]
            ex = exact[i]
            before = self._ldc_before[si]
            total = self._delta(before, ldc[i])
            ev = self._open_ev[si] | np.where(total > 0, COUNTER, 0).astype(np.uint8) | np.where(ex, EXACT, 0).astype(
                np.uint8)
            downs = np.fmax(np.nan_to_num(total), 1)
            self._append(slot=si, start_lo=self._start_lo[si], start_hi=self._start_hi[si],
                         end_lo=np.where(ex, t[i], self._last_down[si]), end_hi=t[i], ldc_before=before,
                         ldc_after=ldc[i], downs=downs, evidence=ev, tag=self._open_tag[si])
            self._total[si] += downs.astype(np.int64) - 1  # the first was counted when it went down
        if went_down.any():
            i = np.flatnonzero(went_down)
            si = s[i]
            ex = exact[i]
            seen = prev[i] == 1
            self._start_lo[si] = np.where(ex, t[i], np.where(seen, self._last_t[si], np.nan))
            self._start_hi[si] = t[i]
            self._ldc_before[si] = np.where(seen, old_ldc[i], np.nan)
            self._open_ev[si] = STATE | np.where(ex, EXACT, 0).astype(np.uint8)
            self._open_tag[si] = tags[i]
            self._total[si] += 1
        down = up == 0
        self._last_down[s[down]] = t[down]
        self._state[s] = up
        self._last_t[s] = t
        read = ~np.isnan(ldc)
        self._ldc[s[read]] = ldc[read]

    # ---------------------------------------------------------------- results
    def episodes(self) -> dict[str, np.ndarray]:
        """Every episode kept, closed then open, as arrays: ``guid``, ``port``, ``start_lo/hi``, ``end_lo/hi``
        (NaN while open), ``open``, ``duration_lo/hi`` (open: up to now), ``duration`` (midpoints; NaN for a
        counter-only down),
        ``ldc_before/after``, ``ldc_delta``, ``downs``, ``evidence``, ``tag``, ``critical``, ``critical_possible``.

        A grading asks several times between two observations: the arrays are made once per state of the tracker
        and given again, read-only (a new dict each call)."""
        kept = self._episodes
        if kept is not None and kept[0] == self._changes and kept[1] == self.now:
            return dict(kept[2])
        out = self._make_episodes()
        for v in out.values():
            v.flags.writeable = False
        self._episodes = (self._changes, self.now, out)
        return dict(out)

    def _make_episodes(self) -> dict[str, np.ndarray]:
        ep = self._ep
        op = np.flatnonzero(self._state == 0)
        now = self.now
        nan = np.full(op.size, np.nan)
        slot = np.concatenate([ep["slot"], op])
        start_lo = np.concatenate([ep["start_lo"], self._start_lo[op]])
        start_hi = np.concatenate([ep["start_hi"], self._start_hi[op]])
        end_lo = np.concatenate([ep["end_lo"], nan])
        end_hi = np.concatenate([ep["end_hi"], nan])
        is_open = np.r_[np.zeros(ep["slot"].size, bool), np.ones(op.size, bool)]
        seen_to = np.where(is_open, np.r_[ep["end_lo"], self._last_down[op]], end_lo)
        up_to = np.where(is_open, now, end_hi)
        dur_lo = np.maximum(seen_to - start_hi, 0.0)
        dur_hi = up_to - np.where(np.isnan(start_lo), -np.inf, start_lo)
        est_start = np.where(np.isnan(start_lo), start_hi, (start_lo + start_hi) / 2)
        est_end = np.where(is_open, now, (end_lo + end_hi) / 2)
        before = np.r_[ep["ldc_before"], self._ldc_before[op]]
        after = np.r_[ep["ldc_after"], self._ldc[op]]
        crit = self.config.critical_s
        evidence = np.r_[ep["evidence"], self._open_ev[op]]
        duration = np.where(evidence == COUNTER, np.nan, np.maximum(est_end - est_start, 0.0))  # counter only: unknown
        return {"guid": self.slots.guid[slot], "port": self.slots.port[slot], "slot": slot,
                "start_lo": start_lo, "start_hi": start_hi, "end_lo": end_lo, "end_hi": end_hi, "open": is_open,
                "duration_lo": dur_lo, "duration_hi": dur_hi, "duration": duration,
                "ldc_before": before, "ldc_after": after, "ldc_delta": self._delta(before, after),
                "downs": np.r_[ep["downs"], np.fmax(np.nan_to_num(self._delta(self._ldc_before[op], self._ldc[op])),
                                                    1).astype(np.int64)],
                "evidence": evidence, "tag": np.r_[ep["tag"], self._open_tag[op]],
                "critical": dur_lo > crit, "critical_possible": dur_hi > crit}

    def seen(self, guid, port) -> tuple[np.ndarray, np.ndarray]:
        """Each port's state at its newest observation (1 up, 0 down, -1 never observed) and that observation's time
        (-inf: never)."""
        s = self.slots.find(np.asarray(guid, np.uint64), np.asarray(port, np.int64))
        known = s >= 0
        state = np.full(s.size, -1, np.int8)
        state[known] = self._state[s[known]]
        t = np.full(s.size, -np.inf)
        t[known] = np.where(state[known] >= 0, self._last_t[s[known]], -np.inf)
        return state, t

    def last_seen(self, guid, port) -> np.ndarray:
        """Time of each port's newest observation (-inf: never observed)."""
        return self.seen(guid, port)[1]

    def retag(self, old: np.ndarray, new: np.ndarray) -> None:
        """Tags ``old`` (sorted, unique) become ``new``; any other tag becomes -1 (what compacting a tag store
        does)."""
        old, new = np.asarray(old, np.int64), np.asarray(new, np.int64)

        def remap(tags: np.ndarray) -> np.ndarray:
            if not old.size:
                return np.full(tags.size, -1, np.int64)
            pos = np.minimum(np.searchsorted(old, tags), old.size - 1)
            return np.where(old[pos] == tags, new[pos], -1)

        self._ep["tag"] = remap(self._ep["tag"])
        self._open_tag = remap(self._open_tag)
        self._changes += 1

    def status(self, now: float | None = None) -> dict[str, np.ndarray]:
        """Per port (one row per slot): ``guid``, ``port``, ``down`` (now), and for the windows ``24h`` and
        ``7d``: ``downs_<w>``, ``downtime_<w>_s`` (proven), ``downtime_<w>_max_s``, ``critical_<w>``;
        ``repeated_downs`` (at least ``repeated`` downs in 24 h) and ``downs_total`` (every down seen)."""
        now = self.now if now is None else float(now)
        e = self.episodes()
        n = len(self.slots)
        out = {"guid": self.slots.guid, "port": self.slots.port, "down": self._state == 0,
               "downs_total": self._total.copy()}
        proven_lo, proven_hi = e["start_hi"], np.where(e["open"], self._last_down[e["slot"]], e["end_lo"])
        outer_lo = np.where(np.isnan(e["start_lo"]), -np.inf, e["start_lo"])
        outer_hi = np.where(e["open"], now, e["end_hi"])
        for name, width in (("24h", DAY_S), ("7d", WEEK_S)):
            lo = now - width
            inside = outer_hi >= lo
            s = e["slot"][inside]
            out[f"downs_{name}"] = np.bincount(s, e["downs"][inside], minlength=n).astype(np.int64)
            sure = np.maximum(np.minimum(proven_hi, now) - np.maximum(proven_lo, lo), 0.0)[inside]
            most = np.maximum(np.minimum(outer_hi, now) - np.maximum(outer_lo, lo), 0.0)[inside]
            out[f"downtime_{name}_s"] = np.bincount(s, sure, minlength=n)
            out[f"downtime_{name}_max_s"] = np.bincount(s, most, minlength=n)
            out[f"critical_{name}"] = np.bincount(s, e["critical"][inside], minlength=n).astype(np.int64)
        out["repeated_downs"] = out["downs_24h"] >= self.config.repeated
        return out


def link_episodes(tracker: DownTracker, a_guid, a_port, b_guid, b_port) -> dict[str, np.ndarray]:
    """Downs per link (ends A and B given as arrays, one row per link): the episodes of both ends that overlap
    in time become one, with ``seen_by`` (1: end A only, 2: end B only, 3: both), each end's ``evidence_a/b``
    and ``ldc_delta_a/b`` (its LinkDownedCounter rise, NaN: not known), the start and end intervals narrowed
    to what both ends agree on, ``downs`` (the larger of the two ends), ``critical`` and ``critical_possible``."""
    a_guid = column("a_guid", a_guid, None, "i")
    n = a_guid.size
    ends = [tracker.slots.find(a_guid, column("a_port", a_port, n, "i")),
            tracker.slots.find(column("b_guid", b_guid, n, "i"), column("b_port", b_port, n, "i"))]
    link_of = np.full(len(tracker.slots), -1, np.int64)
    side_of = np.zeros(len(tracker.slots), np.int64)
    for side, slots in enumerate(ends):
        ok = slots >= 0
        link_of[slots[ok]] = np.flatnonzero(ok)
        side_of[slots[ok]] = side
    e = tracker.episodes()
    mine = np.flatnonzero(link_of[e["slot"]] >= 0) if e["slot"].size else np.zeros(0, np.int64)
    e = {k: v[mine] for k, v in e.items()}
    link, side = link_of[e["slot"]], side_of[e["slot"]]
    now = tracker.now
    lo = np.where(np.isnan(e["start_lo"]), e["start_hi"], e["start_lo"])
    hi = np.where(e["open"], now, e["end_hi"])
    order = np.lexsort((lo, link))
    link, side, lo, hi = link[order], side[order], lo[order], hi[order]
    e = {k: v[order] for k, v in e.items()}
    if link.size:  # running end per link, reset at each link: links spaced wider than all times
        base, span = lo.min(), hi.max() - lo.min() + 1.0
        reach = np.maximum.accumulate(link * span + (hi - base)) - link * span + base
        new = np.r_[True, (link[1:] != link[:-1]) | (lo[1:] > reach[:-1])]
    else:
        new = np.zeros(0, bool)
    first = np.flatnonzero(new)
    group = np.cumsum(new) - 1

    def per(op, values):
        return op.reduceat(values, first) if first.size else values[:0]

    narrow = {"start_lo": per(np.fmax, e["start_lo"]), "start_hi": per(np.fmin, e["start_hi"]),
              "end_lo": per(np.fmax, e["end_lo"]), "end_hi": per(np.fmin, e["end_hi"])}
    wide = {"start_lo": per(np.fmin, e["start_lo"]), "start_hi": per(np.fmax, e["start_hi"]),
            "end_lo": per(np.fmin, e["end_lo"]), "end_hi": per(np.fmax, e["end_hi"])}
    agree = (narrow["start_lo"] <= narrow["start_hi"]) | np.isnan(narrow["start_lo"])
    out = {k: np.where(agree, narrow[k], wide[k]) for k in narrow}
    is_open = per(np.maximum, e["open"].astype(np.int8)).astype(bool)
    out["end_lo"] = np.where(is_open, np.nan, out["end_lo"])
    out["end_hi"] = np.where(is_open, np.nan, out["end_hi"])
    ev = [np.where(side == k, e["evidence"], 0).astype(np.uint8) for k in (0, 1)]
    delta = [np.where(side == k, e["ldc_delta"], np.nan) for k in (0, 1)]
    out.update(link=link[first], open=is_open,
               seen_by=per(np.bitwise_or, (1 << side).astype(np.int64)),
               evidence_a=per(np.bitwise_or, ev[0]), evidence_b=per(np.bitwise_or, ev[1]),
               ldc_delta_a=_nansum_groups(delta[0], group, first.size),
               ldc_delta_b=_nansum_groups(delta[1], group, first.size),
               downs=per(np.maximum, e["downs"]), duration_lo=per(np.fmax, e["duration_lo"]),
               duration_hi=per(np.fmin, e["duration_hi"]))
    out["critical"] = out["duration_lo"] > tracker.config.critical_s
    out["critical_possible"] = out["duration_hi"] > tracker.config.critical_s
    return out


def _nansum_groups(values: np.ndarray, group: np.ndarray, n: int) -> np.ndarray:
    """Sum of the known values per group; NaN for a group with none."""
    known = ~np.isnan(values)
    total = np.bincount(group[known], values[known], minlength=n)
    return np.where(np.bincount(group[known], minlength=n) > 0, total, np.nan)
