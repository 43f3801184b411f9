"""What a tenant-restricted user sees of the feed: their tenants' jobs (also in SHARP and storage) and hosts."""

from __future__ import annotations

import json

OTHER = "other tenant"


def filter_frame(frame: dict, tenants: set[str]) -> dict:
    """A copy of ``frame`` whose jobs, job alerts and hotspot job lists name only ``tenants``' jobs.

    Link arrays are the fabric's and stay whole; traffic of other tenants' jobs on a
    hotspot is summed under ``"other tenant"`` so that the link's load still adds up.
    """
    jobs = [j for j in frame.get("jobs", []) if j.get("tenant") in tenants]
    mine = {j["id"] for j in jobs}
    out = {**frame, "jobs": jobs}
    out["alerts"] = [a for a in frame.get("alerts", []) if "job" not in a or a["job"] in mine]
    if "hotspots" in frame:
        out["hotspots"] = [_hotspot(h, mine) for h in frame["hotspots"]]
    if "sharp" in frame:
        out["sharp"] = filter_sharp(frame["sharp"], tenants)
    if "storage" in frame:
        out["storage"] = filter_storage(frame["storage"], tenants)
    return out


def filter_sharp(section: dict | None, tenants: set[str]) -> dict | None:
    """The ``sharp`` section as ``tenants``' users see it: their jobs, their jobs' names on switches and events."""
    if not section:
        return section
    jobs = [j for j in section.get("jobs", []) if j.get("tenant") in tenants]
    mine = {j["id"] for j in jobs}
    switches = [{**s, "jobs": [j for j in s.get("jobs", []) if j in mine]} for s in section.get("switches", [])]
    events = [e for e in section.get("events", []) if e.get("job") in mine]
    return {**section, "jobs": jobs, "switches": switches, "events": events}


def filter_storage(section: dict | None, tenants: set[str]) -> dict | None:
    """The ``storage`` section as ``tenants``' users see it: their jobs and tenants (and the background row)."""
    if not section:
        return section
    return {**section, "jobs": [j for j in section.get("jobs", []) if j.get("tenant") in tenants],
            "tenants": [t for t in section.get("tenants", []) if t["tenant"] in tenants or t["tenant"] == "background"]}


def _hotspot(hotspot: dict, mine: set[str]) -> dict:
    kept, other = [], 0.0
    for j in hotspot.get("jobs", []):
        if j["id"] in mine or j["id"] == "background":
            kept.append(j)
        else:
            other += j.get("gbps") or 0.0
    if other:
        kept.append({"id": OTHER, "gbps": round(other, 3)})
    return {**hotspot, "jobs": kept}


def filter_text(text: str, tenants: set[str]) -> str:
    """:func:`filter_frame` on a frame's JSON text."""
    return json.dumps(filter_frame(json.loads(text), tenants), separators=(",", ":"))


HIDDEN = "hidden"


def hide_hosts(topology: dict, visible: set[int]) -> dict:
    """``topology`` with the names and GUIDs of hosts outside ``visible`` (node indices) replaced.

    The node and link arrays keep their length and order, so frames still line up;
    a hidden host is shown as ``host-<index>`` with GUID ``"hidden"``.
    """
    nodes = topology["nodes"]
    hidden = [i for i, kind in enumerate(nodes["kind"]) if kind == "host" and i not in visible]
    names, guids = list(nodes["name"]), list(nodes["guid"])
    for i in hidden:
        names[i], guids[i] = f"host-{i}", HIDDEN
    return {**topology, "nodes": {**nodes, "name": names, "guid": guids}}


def filter_snapshot_text(text: str, tenants: set[str], hosts: set[int] | None = None) -> str:
    """The snapshot with its embedded frame filtered and, given ``hosts``, other hosts hidden."""
    snapshot = json.loads(text)
    if snapshot.get("frame"):
        snapshot["frame"] = filter_frame(snapshot["frame"], tenants)
    if hosts is not None and snapshot.get("topology"):
        snapshot["topology"] = hide_hosts(snapshot["topology"], hosts)
    return json.dumps(snapshot, separators=(",", ":"))
