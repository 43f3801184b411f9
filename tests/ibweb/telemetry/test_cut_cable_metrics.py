"""A cut cable's two ports stay at ``infiniband_port_state`` 1 in ``/metrics``, with or without a cabling plan.

With a plan, the state's alerts name the cut as the plan's missing cable (no ``link_down`` condition);
``/metrics`` still takes the ports from the source's conditions against the reference cabling (issue 35).
"""

from __future__ import annotations

import asyncio

import pytest

from fabric_engine.formats import write
from ibweb.twin import plans
from tests.support.tenancy_fixtures import operator_api

from ..runtime.test_metrics_exposition import down_states
from .test_reference_cabling import sweep, watched
from .test_telemetry_routing import _clean_cache  # noqa: F401 (autouse: a clean cache)

pytestmark = pytest.mark.django_db(transaction=True)

CUT = [("lab", "leaf01", "3", "spine01"), ("lab", "spine01", "1", "leaf01")]  # iblinkinfo_unlinked.txt's cable


@pytest.mark.parametrize("with_plan", [False, True])
def test_a_cut_cables_ports_are_down_in_metrics_until_relinked(tmp_path, with_plan):
    config, engine, t = watched(tmp_path)
    if with_plan:  # planned as discovered before the cut
        plans.upload(config.fabric, "design.net", write(engine.source.fabric, "ibsim"))
    asyncio.run(engine.tick())
    assert down_states(operator_api().get("/metrics").content.decode()) == []

    sweep(config, tmp_path, "iblinkinfo_unlinked.txt", t + 10)
    asyncio.run(engine.tick())
    alerts = engine.source.state(None, None, t + 10, engine.seq).alerts  # what the frame's alerts hold
    kinds = {(a["kind"], a.get("deviation")) for a in alerts if a["kind"] in ("link_down", "plan")}
    assert kinds == ({("plan", "missing")} if with_plan else {("link_down", None)})
    assert down_states(operator_api().get("/metrics").content.decode()) == CUT

    sweep(config, tmp_path, "iblinkinfo_relinked.txt", t + 20)
    asyncio.run(engine.tick())
    assert down_states(operator_api().get("/metrics").content.decode()) == []
