"""The digital twin in the dashboard (issue 17), in real headless Chromium against the real server and a real fabric.

ibsim runs a 4x HDR fat tree with one uplink unlinked; OpenSM routes it and dumps its LFTs; the server's
engine sweeps it with iblinkinfo and perfquery (umad2sim) and reads its jobs from a Slurm 23.11 ``squeue
--json`` in a drop directory. A thread of the test raises ibsim's counters along the ring paths of the two
jobs (``ibtracert``), except one spine port of the first job, and puts traffic on a link no job uses. The
cabling plan (CSV) differs from the fabric: a cable missing, two host cables swapped, one cable not planned,
one planned at 1x. The dashboard's twin panel must rank the deviations (one link below, one unexplained),
draw them and the plan's differences over the map, and the plan page must list the differences; the
screenshots of both views go to ``docs/screenshots``.
"""

from __future__ import annotations

import json
import os
import threading
import time
from pathlib import Path

import pytest

from fabric_engine.telemetry import fabric_from_linkinfo, parse_iblinkinfo
from fabric_engine.topology.generate import fat_tree
from tests.conftest import require_tool
from tests.realtools.ibsim import UMAD2SIM, IbSim
from tests.realtools.tracert import ibtracert_hops
from tests.support.browser import chromium_page, poll
from tests.support.server import running_server

pytestmark = [pytest.mark.browser, pytest.mark.realtools]

SCREENSHOTS = Path(__file__).resolve().parents[2] / "docs" / "screenshots"
SLURM = Path(__file__).resolve().parents[1] / "data" / "slurm" / "squeue-23.11.json"
RINGS = {"4242": (1, 2, 9, 10), "4243": (3, 4, 5, 13)}
GBPS = {"4242": 24.0, "4243": 9.0, "stray": 30.0}  # Gb/s each ring step (and the stray traffic) puts on the wire
CUT = ("leaf03", 8)  # the uplink unlinked before the fabric is discovered: missing against the plan


def _plan_csv(design) -> str:
    """The design as a CSV plan, with the differences the report must find."""
    f = design
    rows = [[str(f.node_name[a]), int(pa), str(f.node_name[b]), int(pb), "HDR", "4x"]
            for a, pa, b, pb in zip(f.a_node, f.a_port, f.b_node, f.b_port, strict=True)]
    rows = [r if r[2].startswith("gpu") or not r[0].startswith("gpu") else [*r[2:4], *r[:2], *r[4:]] for r in rows]
    by_host = {r[2]: r for r in rows if r[2].startswith("gpu")}  # host cables as leaf, port, host, port
    a, b = by_host["gpu0015"], by_host["gpu0016"]
    a[1], b[1] = b[1], a[1]  # two host cables swapped at the leaf: miswired
    by_host["gpu0007"][5] = "1x"  # planned at 1x, runs at 4x
    rows.remove(by_host["gpu0008"])  # a cable the plan does not have
    return "node,port,remote node,remote port,speed,width\n" + "\n".join(",".join(map(str, r)) for r in rows) + "\n"


class CounterDriver(threading.Thread):
    """Raises ibsim's counters along the jobs' ring paths at fixed rates until stopped."""

    def __init__(self, sim: IbSim, ports: dict[tuple[str, int, str], float]) -> None:
        super().__init__(daemon=True)
        self.sim, self.ports = sim, ports  # (switch, port, counter) -> Gb/s
        self.level = dict.fromkeys(ports, 0)
        self.halt = threading.Event()
        self.error: BaseException | None = None

    def run(self) -> None:
        last = time.monotonic()
        try:
            while not self.halt.wait(0.5):
                now = time.monotonic()
                for (switch, port, counter), gbps in self.ports.items():
                    self.level[(switch, port, counter)] += int(gbps * 1e9 / 8 / 4 * (now - last))  # 4-byte words
                    self.sim.console(f'PerformanceSet "{switch}"[{port}] PortCountersExtended.{counter}='
                                     f'{self.level[(switch, port, counter)]}')
                last = now
        except BaseException as exc:  # noqa: BLE001 - handed to the test thread
            self.error = exc


@pytest.fixture(scope="module")
def twin_server(tmp_path_factory):
    require_tool("ibsim", "opensm", "iblinkinfo", "perfquery", "ibtracert", UMAD2SIM)
    tmp = tmp_path_factory.mktemp("e2e-twin")
    design = fat_tree(hosts=16, radix=8, speed="HDR")
    from fabric_engine.formats import ibsim as ibsim_format

    sim = IbSim(tmp / "sim", ibsim_format.write(design), sim_host="gpu0001").start()
    try:
        sim.console(f'Unlink "{CUT[0]}"[{CUT[1]}]')
        osm = tmp / "osm"
        sim.run_opensm(["-o", "-D", "0x47"], cache_dir=osm)
        found = fabric_from_linkinfo(parse_iblinkinfo(sim.run(["iblinkinfo"]).stdout))
        lid = {n: str(int(found.port_lid[found.port_offset[found.node(f"gpu{n:04d} HCA-1")]])) for n in range(1, 17)}
        ports: dict[tuple[str, int, str], float] = {}
        skipped = None
        for job, ranks in RINGS.items():
            for a, b in zip(ranks, ranks[1:] + ranks[:1], strict=True):
                lids = [lid[a], lid[b]]
                hops = ibtracert_hops(sim.run(["ibtracert", *lids], sim_host=f"gpu{a:04d}").stdout)
                leaf, in_port, _ = hops[0]
                key = (leaf, in_port, "PortRcvData")
                ports[key] = ports.get(key, 0.0) + GBPS[job]
                for switch, _, out in hops:
                    if skipped is None and job == "4242" and switch.startswith("spine"):
                        skipped = (switch, out)  # this port's counters stay still: far below its jobs
                    if (switch, out) == skipped:
                        continue
                    key = (switch, out, "PortXmitData")
                    ports[key] = ports.get(key, 0.0) + GBPS[job]
        assert skipped is not None
        used = {(s, p) for s, p, _ in ports} | {skipped}
        cabled = [(str(found.node_name[found.dl_src[d]]), int(found.dl_src_port[d]))
                  for d in range(2 * found.num_links)]
        stray = next(sp for sp in reversed(cabled) if sp[0].startswith("spine") and sp not in used)
        ports[(*stray, "PortXmitData")] = GBPS["stray"]
        driver = CounterDriver(sim, ports)
        drop = tmp / "drop"
        drop.mkdir()
        doc = json.loads(SLURM.read_text())
        for job in doc["jobs"]:
            job["start_time"]["number"], job["end_time"]["number"] = int(time.time() - 600), int(time.time() + 7200)
        (drop / "squeue.json").write_text(json.dumps(doc))
        plan = tmp / "plan.csv"
        plan.write_text(_plan_csv(design))
        env = {k: v for k, v in sim.client_env("gpu0001").items() if k in ("LD_PRELOAD", "SIM_HOST", "IBSIM_SOCKNAME")}
        setup = f"""
from ibweb.fabrics.models import Fabric
from ibweb.telemetry.models import CollectorConfig
from ibweb.tenancy.models import Tenant
from ibweb.twin import plans
from ibweb.twin.models import JobSource
row = Fabric.objects.create(name="GPU cluster (ibsim)", slug="twin", mode="telemetry", tick_s=1.0)
CollectorConfig.objects.create(fabric=row, environment={env!r}, timeout_s=20.0, interval_s=1.0, shard_size=8,
                               stale_after_s=600.0, lfts_path={str(osm / 'opensm-lfts.dump')!r})
JobSource.objects.create(fabric=row, kind="directory", drop_dir={str(drop)!r}, interval_s=2.0,
                         accounts={{"llm-pretrain": "acme"}}, raise_after=2, clear_after=3)
Tenant.objects.get_or_create(slug="acme", defaults={{"name": "Acme"}})
plans.upload(row, "rack-plan.csv", open({str(plan)!r}).read())
"""
        driver.start()
        with running_server(tmp, setup=setup) as server:
            yield server, driver, skipped, stray
        driver.halt.set()
        driver.join(10)
    finally:
        sim.stop()


def test_expected_against_observed_and_the_plan_in_the_dashboard(twin_server):
    server, driver, skipped, stray = twin_server
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    with chromium_page(viewport={"width": 1600, "height": 1000}, signed_in=server) as page:
        page.goto(f"{server.url}/fabrics/twin/")
        poll(page, "window.ibweb && window.ibweb.ready === true", 60)
        rows = poll(page, "(() => { const t = window.ibweb.twin; const k = t && t.rows.map((r) => r.kind);"
                          " return k && k.includes('below') && k.includes('unexplained') && t.rows; })()", 120)
        assert driver.error is None, driver.error
        below = next(r for r in rows if r["kind"] == "below")
        assert below["label"].startswith(f"{skipped[0]} port {skipped[1]} ->") and "4242" in below["jobs"]
        unexplained = next(r for r in rows if r["kind"] == "unexplained")
        assert unexplained["label"].startswith(f"{stray[0]} port {stray[1]} ->") and unexplained["jobs"] == []
        # the jobs of the scheduler are the dashboard's jobs, as on an emulated fabric
        jobs = page.locator(".ibweb-jobs-table tbody tr")
        poll(page, "document.querySelectorAll('.ibweb-jobs-table tbody tr').length === 2")
        assert jobs.nth(0).inner_text().startswith("4242")
        page.get_by_role("radio", name="Expected").click()
        poll(page, "window.ibweb.twin.mode === 'expected' && window.ibweb.twin.overlaid >= 2")
        page.wait_for_timeout(300)
        page.screenshot(path=str(SCREENSHOTS / "twin-expected.png"))
        page.get_by_role("radio", name="Plan").click()
        # two miswired host cables, one not in the plan, one at the wrong width
        poll(page, "window.ibweb.twin.mode === 'plan' && window.ibweb.twin.overlaid === 4", 30)
        assert not page.errors, page.errors
        # a cable's port detail shows both ends' error counters from the newest sweep (issue 35)
        point = page.evaluate("window.ibweb.linkAt(0)")
        page.mouse.click(point["x"], point["y"])
        poll(page, "document.querySelectorAll('.ibweb-detail-counters table').length === 2", 30)
        summary = page.locator(".ibweb-detail-counters summary")
        assert summary.inner_text().endswith("none above threshold"), summary.inner_text()
        summary.click()  # folded while no counter is above its threshold
        counters = page.locator(".ibweb-detail-counters").inner_text()
        assert "no error counters read" in counters  # the host's end: its counters are not swept
        assert "SymbolErrorCounter" in counters and "rate/min" in counters and "threshold/min" in counters, counters

        page.goto(f"{server.url}/fabrics/twin/plan/")
        kinds = page.locator("#plan-issues tbody tr[data-kind]").evaluate_all("rows => rows.map((r) => r.dataset.kind)")
        assert sorted(kinds) == ["extra", "missing", "miswired", "miswired", "wrong_width"], kinds
        text = page.locator("#plan-issues").inner_text()
        assert f"{CUT[0]} port {CUT[1]}" in text and "not cabled" in text and "(planned 1x)" in text
        page.screenshot(path=str(SCREENSHOTS / "twin-plan.png"), full_page=True)
        assert not page.errors, page.errors
    assert os.path.getsize(SCREENSHOTS / "twin-expected.png") > 10_000
