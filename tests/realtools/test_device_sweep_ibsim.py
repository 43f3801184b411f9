"""The collector's validation reads on a real subnet (issue 38): ibsim, OpenSM with a ``partitions.conf`` giving
P_Key 0x0001 to gpu0001 alone and partition enforcement off (``-Z off``: the switch port keeps the default table
only), the collector's sweep running ``sminfo`` and ``smpquery pkeys`` itself, the readings kept in the fabric's
device readings and judged by ``fabric_engine.validation``: the P_Key on one end and the link trained 1x are
found. A host's ``ibstat`` and ``ibv_devinfo -v``, run under the simulator, pushed with the collector's token, are
kept beside them.
"""

from __future__ import annotations

import time

import pytest

from fabric_engine.telemetry import fabric_from_linkinfo, parse_iblinkinfo
from fabric_engine.validation import validate
from tests.realtools.test_validation_ibsim import _net

pytestmark = pytest.mark.realtools


@pytest.mark.django_db(transaction=True)
def test_the_collectors_pkey_and_sm_reads_find_the_mismatch_on_ibsim(ibsim, tmp_path):
    from django.core.cache import cache

    from ibweb.fabrics.choices import FabricMode
    from ibweb.fabrics.models import Fabric
    from ibweb.runtime import device_readings
    from ibweb.telemetry import device_sweep, store
    from ibweb.telemetry.models import CollectorConfig
    from ibweb.telemetry.sweeps import run_sweep

    cache.clear()
    net, design = _net()
    guid = f"0x{int(design.port_guid[design.port_offset[design.node('gpu0001')]]):016x}"
    part = tmp_path / "partitions.conf"
    part.write_text("Default=0x7fff, ipoib : ALL=limited, ALL_SWITCHES=full, SELF=full ;\n"
                    f"acme=0x0001 : {guid}=full ;\n")
    sim = ibsim(net, sim_host="gpu0004", tools=("smpquery", "sminfo", "iblinkinfo", "perfquery"))
    osm = sim.workdir / "osm"
    osm.mkdir()
    sim.start_opensm(["-P", str(part), "-Z", "off", "-s", "0"], cache_dir=osm)
    deadline = time.monotonic() + 60
    while "SMINFO_MASTER" not in (out := sim.run(["sminfo"], check=False).stdout):
        assert time.monotonic() < deadline, f"no master SM after 60 s: {out!r}"
        time.sleep(0.3)
    env = {k: v for k, v in sim.client_env("gpu0004").items() if k in ("LD_PRELOAD", "SIM_HOST", "IBSIM_SOCKNAME")}
    row = Fabric.objects.create(name="ibsim", slug="ibsim", mode=FabricMode.TELEMETRY, tick_s=1.0)
    config = CollectorConfig.objects.create(fabric=row, environment=env, timeout_s=20.0, validation_every=10)
    sweep = run_sweep(config)
    assert sweep.status == "ok", sweep.failures
    assert device_sweep.wait_idle(240)  # the validation reads run off the sweep (ibsim answers slowly under load)
    sweep.refresh_from_db()
    assert not [w for w in sweep.warnings if w["text"].startswith(("sminfo", "smpquery"))], sweep.warnings
    r = device_readings.read(row.pk)
    assert len(r.sms) == 1 and r.sms[0].master
    assert len(r.pkeys) == 2 * 4  # both ends of the 4 host cables
    _, newest = store.sweeps(row.pk)
    fabric = fabric_from_linkinfo(parse_iblinkinfo(newest["linkinfo"]))
    report = validate(fabric, sminfo=r.sms, pkeys=r.pkeys)
    by_check: dict[str, list] = {}
    for f in report.findings:
        by_check.setdefault(f.check, []).append(f)
    (pk,) = by_check["pkey_mismatch"]
    assert pk.severity == "error" and "gpu0001" in pk.subject and "leaf01" in pk.subject
    assert pk.evidence["only_at_ca"] == ["0x0001"] and pk.evidence["only_at_switch"] == []
    (slow,) = by_check["link_below_expected"]
    assert "gpu0002" in slow.subject and slow.evidence["width"] == 1
    assert report.checks["sm_mastership"]["status"] == "pass"

    # a host pushes its ibstat (run on gpu0001 under the simulator) with the collector's token
    from rest_framework.test import APIClient

    from ibweb.telemetry.models import PushToken

    _, raw = PushToken.issue(config, "hosts")
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {raw}")
    text = sim.run(["ibstat"], sim_host="gpu0001").stdout
    got = client.post("/api/telemetry/fabrics/ibsim/devices/",
                      {"captures": [{"name": "gpu0001-ibstat.txt", "text": text, "host": "gpu0001"}]}, format="json")
    assert got.status_code == 200, got.json()
    r = device_readings.read(row.pk)
    (hca,) = r.hca_ports
    assert hca.node.startswith("gpu0001/") and hca.guid is not None and hca.rate_gbps is not None
    assert (hca.state, hca.phys_state, hca.port) == ("Active", "LinkUp", 1)
    assert len(r.pkeys) == 8 and len(r.sms) == 1  # the push kept what the collector read
    device_readings.forget(row.pk)
