"""Links running below the width or lane speed they should.

Expected per cable: the cabling plan's width and speed where the plan gives them
(:func:`fabric_engine.twin.plan.compare_plan`: a cable cabled as planned is checked against its planned values;
a planned value left blank is not checked), else the majority of the cable's *link class* in the fabric
itself: the pair of tiers it joins (``host-leaf``, ``leaf-spine``, ``spine-core``...), ties going to the higher
value (a design is more likely than a degradation shared by half the class). Only a value *below* the
expectation is a finding; a link faster than its plan is the plan's concern (``compare_plan``). Vectorized
over cables; the loop builds findings for the slow cables only.
"""

from __future__ import annotations

import numpy as np

from ..topology import SPEEDS, TIER_NAMES, Fabric
from ..topology.speeds import capacity_gbps
from .findings import ERROR, WARNING, Finding
from .names import cable_names

__all__ = ["link_classes", "class_majority", "expected_rates", "slow_links", "CHECK"]

CHECK = "link_below_expected"


def link_classes(fabric: Fabric) -> tuple[np.ndarray, list[str]]:
    """Class code of every cable (int64 ``[L]``) and the class names by code (``"host-leaf"``...)."""
    ta = fabric.tier[fabric.a_node].astype(np.int64)
    tb = fabric.tier[fabric.b_node].astype(np.int64)
    n = len(TIER_NAMES)
    names = [f"{TIER_NAMES[lo]}-{TIER_NAMES[hi]}" for lo in range(n) for hi in range(n)]
    return np.minimum(ta, tb) * n + np.maximum(ta, tb), names


def class_majority(classes: np.ndarray, values: np.ndarray) -> np.ndarray:
    """Per element, the most common value of its class (ties: the higher value)."""
    if classes.size == 0:
        return np.zeros(0, dtype=values.dtype)
    v = values.astype(np.int64)
    combo = classes.astype(np.int64) * 1024 + v
    uniq, inv, counts = np.unique(combo, return_inverse=True, return_counts=True)
    ucls, uval = uniq // 1024, uniq % 1024
    order = np.lexsort((uval, counts, ucls))  # last of each class: most common, then highest
    last = np.r_[ucls[order][1:] != ucls[order][:-1], True]
    best = order[last]
    mode = np.empty(int(ucls.max()) + 1, dtype=np.int64)
    mode[ucls[best]] = uval[best]
    return mode[ucls[inv]].astype(values.dtype)


def expected_rates(fabric: Fabric, plan=None) -> dict[str, np.ndarray]:
    """``width``, ``speed`` expected per cable and ``basis`` (0 majority, 1 plan) ``[L]``; with a ``plan``
    (:class:`fabric_engine.twin.plan.Plan`) also ``plan_report``."""
    classes, _ = link_classes(fabric)
    width = class_majority(classes, fabric.width)
    speed = class_majority(classes, fabric.speed)
    basis = np.zeros(fabric.num_links, dtype=np.int8)
    out: dict = {}
    if plan is not None:
        from ..twin.plan import ISSUE_KINDS, compare_plan

        rep = compare_plan(plan, fabric)
        status = rep.link_status[:fabric.num_links]
        covered = np.isin(status, [0, 1 + ISSUE_KINDS.index("wrong_speed"), 1 + ISSUE_KINDS.index("wrong_width")])
        basis[covered] = 1
        width = np.where(covered, fabric.width, width)
        speed = np.where(covered, fabric.speed, speed)
        for it in rep.issues:  # the differences only
            if it["kind"] == "wrong_width":
                width[it["link"]] = int(it["expected"].rstrip("x"))
            elif it["kind"] == "wrong_speed":
                speed[it["link"]] = SPEEDS.index(it["expected"])
        out["plan_report"] = rep
    out.update(width=width.astype(np.int8), speed=speed.astype(np.int8), basis=basis, classes=classes)
    return out


def slow_links(fabric: Fabric, plan=None, expected: dict | None = None) -> list[Finding]:
    """A finding per cable below its expected width or speed: ``error`` when it carries at most half the
    expected rate, else ``warning``."""
    exp = expected if expected is not None else expected_rates(fabric, plan)
    narrow = fabric.width < exp["width"]
    slow = fabric.speed < exp["speed"]
    bad = np.flatnonzero(narrow | slow)
    if bad.size == 0:
        return []
    _, class_names = link_classes(fabric)
    have = capacity_gbps(fabric.width[bad], fabric.speed[bad])
    want = capacity_gbps(exp["width"][bad], exp["speed"][bad])
    trained = fabric.trained_down[bad]
    out = []
    for i, (c, name) in enumerate(zip(bad.tolist(), cable_names(fabric, bad), strict=True)):
        cls = class_names[int(exp["classes"][c])]
        basis = "plan" if exp["basis"][c] else f"majority of {cls} links"
        got = f"{int(fabric.width[c])}x{SPEEDS[fabric.speed[c]]}"
        should = f"{int(exp['width'][c])}x{SPEEDS[exp['speed'][c]]}"
        ev = {"width": int(fabric.width[c]), "speed": SPEEDS[fabric.speed[c]],
              "expected_width": int(exp["width"][c]), "expected_speed": SPEEDS[exp["speed"][c]],
              "basis": basis, "class": cls, "gbps": float(have[i]), "expected_gbps": float(want[i]),
              "ends_disagree": bool(trained[i])}
        out.append(Finding(CHECK, ERROR if have[i] <= want[i] / 2 else WARNING, name,
                           f"{name} runs at {got}, expected {should} ({basis})", ev, c))
    return out
