"""Fixtures for tests against the real tools (ibsim, OpenSM, infiniband-diags).

``ibsim`` is a factory: call it with a net file (text or path) or a
:class:`~fabric_engine.topology.Fabric` and it returns a started
:class:`tests.realtools.ibsim.IbSim`; every simulator it made is stopped (by PID)
when the test ends::

    def test_something(ibsim):
        sim = ibsim(fat_tree(hosts=8, radix=8, speed="HDR"), sim_host="gpu0001")
        sim.run_opensm(["-o"])
        text = sim.run(["ibnetdiscover"]).stdout
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.conftest import require_tool
from tests.realtools.ibsim import UMAD2SIM, IbSim

__all__ = ["ibsim", "REAL_TOOLS"]

#: What every real-tool test needs at least.
REAL_TOOLS = ("ibsim", "opensm", "ibnetdiscover", UMAD2SIM)


@pytest.fixture
def ibsim(tmp_path: Path) -> Callable[..., IbSim]:
    """Factory ``ibsim(net, *, sim_host=None, name=None, tools=()) -> IbSim`` (started).

    ``net`` is net-file text, a ``Path`` to a net file, or a ``Fabric`` (written with
    :func:`fabric_engine.formats.ibsim.write`). ``tools`` names extra programs the
    test needs (checked with :func:`tests.conftest.require_tool`).
    """
    sims: list[IbSim] = []

    def make(net, *, sim_host: str | None = None, name: str | None = None, tools: tuple[str, ...] = ()) -> IbSim:
        require_tool(*REAL_TOOLS, *tools)
        if not isinstance(net, str | Path):
            from fabric_engine.formats import ibsim as ibsim_format

            net = ibsim_format.write(net)
        sim = IbSim(tmp_path / (name or f"ibsim{len(sims)}"), net, sim_host=sim_host)
        sims.append(sim)
        return sim.start()

    yield make
    # A collector's validation reads run off its sweep, on this process's one thread: let them end before their
    # simulator does, so that none outlives it into the next test's wait (each of its tools would time out there).
    sweeps = sys.modules.get("ibweb.telemetry.device_sweep")
    if sweeps is not None:
        sweeps.wait_idle(240)
    for sim in sims:
        sim.stop()
