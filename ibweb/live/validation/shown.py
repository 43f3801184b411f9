"""A validation report as one access view reads it, as on the Health page: the hosts the view may not name read as
``host-<index>`` and their GUIDs as ``hidden`` (:mod:`ibweb.access.redaction`), wherever a finding or an advised
port names them (subject, message, evidence), and the P_Keys of partitions the view does not see read ``hidden``
(the default partition's excepted). Switches are fabric-wide and always shown. Every finding and advised port gets
``map_url``: the fabric's map focused on its cable, or on its node.

The names are found by :func:`ibweb.access.relabel.candidates` of each text (a finding's few dozen words) looked up
on the fabric, never by a pattern of every hidden host (tens of thousands at 32,768 GPUs). Below ``ALL`` a GUID or
a host name a finding recorded is redacted by default: kept only when it is a switch's or a visible host's of the
fabric now (:class:`Labels`). The inputs' notes (the cabling plan reader's errors) are shown at ``ALL`` only.
"""

from __future__ import annotations

import re
from urllib.parse import quote

import numpy as np

from ibweb.access import HIDDEN, Redaction, host_label, relabel
from ibweb.access.relabel import candidates

__all__ = ["Labels", "shown_report", "shown_digest", "map_url"]

_GUID = re.compile(r"0x[0-9a-fA-F]{16}")
_PKEY = re.compile(r"0x[0-9a-fA-F]{4}")
_DEFAULT_PKEY = 0x7FFF
#: What a view below ``ALL`` reads for an input that could not be read (its error quotes the file).
_NOTE_BELOW_ALL = "an input could not be read (the details are shown to operators)"


def _words(names) -> int:
    """The most words any of ``names`` spans (``gpu001 mlx5_0``: 2); 1 for none."""
    return 1 + max((n.count(" ") for n in names if " " in n), default=0)


class Labels:
    """The labels of the names one view may not read on one fabric, found text by text (memoized).

    Redacted by default: a GUID reads ``hidden`` unless it is a switch's or a visible host's of ``fabric`` (one that
    left the fabric, or was never of it, too); a hidden host's name reads ``host-<index>``; ``named`` (host names a
    finding recorded when it was built, :func:`ibweb.live.validation.build.hosts_named`) read ``hidden`` unless they
    are a visible host's or a switch's of ``fabric`` now (a host gone since the digest's older report).
    """

    def __init__(self, fabric, hidden: np.ndarray, pkeys: set[int] | None, named=()) -> None:
        self.fabric = fabric
        self.hidden = hidden
        self.pkeys = pkeys  # base P_Keys the view sees (None: every one)
        which = np.flatnonzero(hidden)
        names = fabric.node_name[which].tolist()
        self._names = dict(zip(names, which.tolist(), strict=True))  # hidden hosts only
        gone = {}
        for n in set(named) - self._names.keys():  # a finding's few hosts
            i = self._node(n)
            if i is None:
                gone[n] = HIDDEN
        self._gone = gone
        # the words a hidden name spans at most: every word of the longest, so none stays whole
        self._words = max(_words(names), _words(gone))
        self._seen: dict[str, str | None] = {}

    def _node(self, key) -> int | None:
        try:
            return int(self.fabric.node(key))
        except (KeyError, ValueError, OverflowError):
            return None

    def _label(self, word: str) -> str | None:
        if word in self._seen:
            return self._seen[word]
        out = None
        if _GUID.fullmatch(word):
            i = self._node(int(word, 16))
            out = HIDDEN if i is None or self.hidden[i] else None  # by default: kept only for what the view sees
        elif _PKEY.fullmatch(word) and self.pkeys is not None:
            base = int(word, 16) & 0x7FFF
            out = None if base == _DEFAULT_PKEY or base in self.pkeys else HIDDEN
        else:
            i = self._names.get(word)
            out = host_label(i) if i is not None else self._gone.get(word)
        self._seen[word] = out
        return out

    def text(self, text: str) -> str:
        """``text`` with the hidden names it holds replaced."""
        found = {c: lab for c in candidates(text, self._words) if (lab := self._label(c)) is not None}
        return relabel(text, found) if found else text

    def value(self, value):
        """Every string inside ``value`` (a dict, list or scalar) relabelled (a copy where anything changed)."""
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, dict):
            return {k: self.value(v) for k, v in value.items()}
        if isinstance(value, list | tuple):
            return [self.value(v) for v in value]
        return value


def map_url(slug: str, focus: dict | None, fabric, hidden: np.ndarray) -> str | None:
    """The fabric's map focused on ``focus`` (``{"link": d}`` or ``{"node": i}``); None without one."""
    if not focus:
        return None
    if "link" in focus:
        return f"/fabrics/{slug}/?focus=link:{int(focus['link'])}"
    i = int(focus["node"])
    name = host_label(i) if hidden[i] else str(fabric.node_name[i])
    return f"/fabrics/{slug}/?focus=node:{quote(name)}"


def _named(findings) -> set[str]:
    """The host names ``findings`` recorded when built (:func:`ibweb.live.validation.build.hosts_named`)."""
    return {n for f in findings for n in f.get("hosts") or ()}


def _finding(d: dict, labels: Labels | None, slug: str, fabric, hidden) -> dict:
    out = {k: v for k, v in d.items() if k not in ("focus", "hosts")}
    if labels is not None:
        out.update(subject=labels.text(d["subject"]), message=labels.text(d["message"]),
                   evidence=labels.value(d["evidence"]))
    out["map_url"] = map_url(slug, d.get("focus"), fabric, hidden)
    return out


def _advice(a: dict, labels: Labels | None, slug: str, fabric, hidden) -> dict:
    out = {k: v for k, v in a.items() if k != "focus"}
    if labels is not None:
        i = a.get("node_index", -1)
        out.update(node=labels.text(a["node"]), link=labels.text(a["link"]), note=labels.text(a["note"]),
                   disconnects=[labels.text(x) for x in a["disconnects"]],
                   guid=HIDDEN if 0 <= i < len(hidden) and hidden[i] else a["guid"])
    out["map_url"] = map_url(slug, a.get("focus"), fabric, hidden)
    return out


def _isolated(r: dict, labels: Labels | None, slug: str, fabric, hidden) -> dict:
    """A port isolated now as the view reads it: a node it may not see (or no longer in the fabric) relabelled."""
    out = {k: v for k, v in r.items() if k != "focus"}
    i = r.get("node_index")
    if labels is not None:
        if i is None:
            out.update(node=HIDDEN, guid=HIDDEN, source=HIDDEN)
        elif hidden[i]:
            out.update(node=host_label(i), guid=HIDDEN, source=HIDDEN)
        else:
            out.update(node=labels.text(r["node"]), source=labels.text(r.get("source") or ""))
    out["map_url"] = map_url(slug, r.get("focus"), fabric, hidden)
    return out


def shown_report(stored: dict, slug: str, fabric, shown: Redaction, pkeys: set[int] | None,
                 problems_only: bool = False) -> dict:
    """``stored`` (:func:`ibweb.live.validation.build.build_report`) as the view of ``shown`` (its redaction on
    ``fabric``) and ``pkeys`` (the base P_Keys of the partitions it sees; None: every one) reads it (a copy).
    ``problems_only``: no ``info`` finding, only the checks that failed."""
    hidden = shown.hidden_nodes(fabric)
    report = stored["report"]
    labels = None if shown.shows_all and pkeys is None else Labels(fabric, hidden, pkeys, _named(report["findings"]))
    findings = report["findings"]
    checks = report["checks"]
    if problems_only:
        findings = [f for f in findings if f["severity"] != "info"]
        checks = {k: v for k, v in checks.items() if v["status"] == "fail"}
    out = {**report, "checks": checks, "findings": [_finding(f, labels, slug, fabric, hidden) for f in findings],
           "problems_only": problems_only}
    iso = stored.get("isolation")
    if iso is not None:
        iso = {**iso, **{part: [_advice(a, labels, slug, fabric, hidden) for a in iso[part]]
                         for part in ("advised", "held_back")}}
    inputs = dict(stored.get("inputs", {}))
    if labels is not None and inputs.get("notes"):  # a reader's error quotes its file: operators only
        inputs["notes"] = [_NOTE_BELOW_ALL] * len(inputs["notes"])
    isolated = [_isolated(r, labels, slug, fabric, hidden) for r in stored.get("isolated") or ()]
    return {"t": stored["t"], "version": stored.get("version"), "report": out, "isolation": iso,
            "isolated": isolated, "inputs": inputs}


def shown_digest(digest: dict | None, fabric, shown: Redaction, pkeys: set[int] | None) -> dict | None:
    """The daily digest (:func:`ibweb.live.validation.store.digest`) as :func:`shown_report` shows findings."""
    if digest is None:
        return None
    parts = {k: digest.get(k, []) for k in ("new", "resolved", "changed")}
    named = _named(f for fs in parts.values() for f in fs)
    labels = None if shown.shows_all and pkeys is None else Labels(fabric, shown.hidden_nodes(fabric), pkeys, named)

    def one(f: dict) -> dict:
        out = {k: v for k, v in f.items() if k not in ("nodes", "focus", "hosts")}
        if labels is None:
            return out
        if "hosts" not in f:  # kept before findings recorded their hosts: nothing known to keep
            return {**out, "subject": HIDDEN, "message": HIDDEN, **({"evidence": {}} if "evidence" in out else {})}
        return labels.value(out)

    return {**digest, **{k: [one(f) for f in fs] for k, fs in parts.items()}}
