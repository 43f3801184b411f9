"""Issue 38 on a real subnet (ibsim): two OpenSMs, one master (priority 15) and one standby (priority 1); the
collector's validation read finds both (``sminfo``, ``saquery -s``, ``sminfo <lid>``) and the mastership check
passes with the standby listed. A switch port disabled with ``ibportstate`` shows ``Disabled`` in the sweep's
iblinkinfo and is recorded as isolated in the fabric's device readings.
"""

from __future__ import annotations

import time

import pytest

from fabric_engine.telemetry import fabric_from_linkinfo, parse_iblinkinfo
from fabric_engine.topology.generate import fat_tree
from fabric_engine.validation import validate

pytestmark = pytest.mark.realtools


def _wait(sim, cmd: list[str], text: str, what: str) -> str:
    deadline = time.monotonic() + 60
    while text not in (out := sim.run(cmd, check=False).stdout):
        assert time.monotonic() < deadline, f"{what} after 60 s: {out!r}"
        time.sleep(0.3)
    return out


@pytest.mark.django_db(transaction=True)
def test_master_and_standby_sms_and_a_disabled_port_on_ibsim(ibsim):
    from django.core.cache import cache

    from ibweb.fabrics.choices import FabricMode
    from ibweb.fabrics.models import Fabric
    from ibweb.runtime import device_readings
    from ibweb.telemetry import device_sweep, store
    from ibweb.telemetry.models import CollectorConfig
    from ibweb.telemetry.sweeps import run_sweep

    cache.clear()
    sim = ibsim(fat_tree(hosts=4, radix=4, speed="HDR"), sim_host="gpu0004",
                tools=("smpquery", "sminfo", "saquery", "iblinkinfo", "perfquery", "ibportstate"))
    for host, priority in (("gpu0004", 15), ("gpu0003", 1)):
        osm = sim.workdir / f"osm-{host}"
        osm.mkdir()
        sim.start_opensm(["-p", str(priority), "-s", "0"], cache_dir=osm, sim_host=host)
        if host == "gpu0004":
            _wait(sim, ["sminfo"], "SMINFO_MASTER", "no master SM")
    _wait(sim, ["saquery", "-s"], "IsSM ports", "no saquery answer")
    deadline = time.monotonic() + 60
    while len([ln for ln in sim.run(["saquery", "-s"]).stdout.split("IsSMdisabled")[0].splitlines()
               if "EndPortLid" in ln]) < 2:
        assert time.monotonic() < deadline, "the standby never showed as IsSM"
        time.sleep(0.3)
    env = {k: v for k, v in sim.client_env("gpu0004").items() if k in ("LD_PRELOAD", "SIM_HOST", "IBSIM_SOCKNAME")}
    row = Fabric.objects.create(name="ibsim-sms", slug="ibsim-sms", mode=FabricMode.TELEMETRY, tick_s=1.0)
    config = CollectorConfig.objects.create(fabric=row, environment=env, timeout_s=20.0, validation_every=10)
    try:
        sweep = run_sweep(config)
        assert sweep.status == "ok", sweep.failures
        assert device_sweep.wait_idle(240)  # the validation reads run off the sweep (ibsim answers slowly under load)
        sweep.refresh_from_db()
        assert not [w for w in sweep.warnings if w["text"].startswith(("sminfo", "saquery"))], sweep.warnings
        r = device_readings.read(row.pk)
        states = sorted((sm.state_name, sm.priority) for sm in r.sms)
        assert states == [("MASTER", 15), ("STANDBY", 1)], r.sms
        _, newest = store.sweeps(row.pk)
        fabric = fabric_from_linkinfo(parse_iblinkinfo(newest["linkinfo"]))
        report = validate(fabric, sminfo=r.sms)
        assert report.checks["sm_mastership"]["status"] == "pass"
        assert r.isolated == []

        # take an uplink of leaf01 out of service; the next validation read records it isolated
        leaf = fabric.node("leaf01")
        up = next(p for p in range(1, int(fabric.nports[leaf]) + 1)
                  if (d := int(fabric.out_link(leaf, p))) >= 0 and fabric.kind[fabric.dl_dst[d]] == fabric.kind[leaf])
        sim.run(["ibportstate", str(int(fabric.lid[leaf])), str(up), "disable"])
        linkinfo = _wait(sim, ["iblinkinfo"], "Disabled", "no Disabled port")
        device_sweep.run_validation(config, linkinfo)
        r = device_readings.read(row.pk)
        assert [(x.guid, x.port, x.node) for x in r.isolated] == [(int(fabric.guid[leaf]), up, "leaf01")]
    finally:
        device_readings.forget(row.pk)
