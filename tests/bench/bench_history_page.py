"""The History page's first draw on the demo in headless Chromium (issue 40): API requests and time to all charts.

A real ibweb server runs the demo fabric with its per-port history written every second
(``IBWEB_TSDB_INTERVAL_S=1``). Once the store has :data:`PORTS` ports and the server has run ``BENCH_WARM_S``
(default 120) seconds, the History page is opened on the last hour with the :data:`PORTS` hottest ports named in its
address (``?range=1h&ports=...``), once to warm up, then ``BENCH_VISITS`` times (default 5), and the same for the
page without ports (its :data:`AUTO` hottest charted).
Measured per visit: the requests to ``/api/`` the page made until every chart was drawn and both top-N tables
filled (Playwright's request events), and the page's own ``data-first-chart-ms`` and ``data-all-charts-ms``
(from the navigation's start). Target: the current bundle draws all :data:`PORTS` charts within
:data:`ALL_CHARTS_MS` of the navigation (median).

``--bundle-rev REV`` (a git revision, e.g. ``ea2d01c``) also measures that revision's ``frontend/src``, built with the
same esbuild command and served in place of ``frontend/dist`` (Playwright routes the bundle's address), in the same
server, its visits alternating with the current bundle's: the page as it was and as it is side by side. Run (after
``make frontend``): ``.venv/bin/python tests/bench/bench_history_page.py [--bundle-rev REV]``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from tests.bench.stored_ports import hottest  # noqa: E402
from tests.bench.targets import machine, target  # noqa: E402
from tests.support.browser import chromium_page, poll  # noqa: E402
from tests.support.server import running_server  # noqa: E402

PORTS = 20
AUTO = 4
VISITS = int(os.environ.get("BENCH_VISITS", "5"))
WARM_S = float(os.environ.get("BENCH_WARM_S", "120"))
CURRENT = "frontend/dist"
ALL_CHARTS_MS = 2000.0
DONE = """(n) => {
  const m = document.querySelector("main.history-page");
  if (!m || m.dataset.state !== "ready" || !m.dataset.allChartsMs || Number(m.dataset.charts) < n) return null;
  return {first: Number(m.dataset.firstChartMs), all: Number(m.dataset.allChartsMs), charts: Number(m.dataset.charts),
          bins: [...document.querySelectorAll("article.history-chart svg")]
            .reduce((k, s) => k + Number(s.dataset.points || 0), 0)};
}"""


def build_bundle(rev: str, out: Path) -> Path:
    """``frontend/src`` at git revision ``rev`` built as ``make frontend`` builds it, into ``out``."""
    src = out / "frontend"
    src.mkdir(parents=True)
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", rev, "frontend/src", "frontend/package.json"],
                             check=True, capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(out)], input=archive, check=True)
    (src / "node_modules").symlink_to(ROOT / "frontend" / "node_modules")
    build = json.loads((src / "package.json").read_text())["scripts"]["build"]
    subprocess.run(build.replace("esbuild", str(ROOT / "frontend/node_modules/.bin/esbuild"), 1), shell=True,
                   cwd=src, check=True)
    return src / "dist"


def visit(page, url: str, charts: int, asked: list[str]) -> dict:
    asked.clear()
    page.goto(url, wait_until="load")
    got = poll(page, f"({DONE})({charts})", 120)
    return {**got, "requests": sum("/api/" in u for u in asked), "tsdb": sum("tsdb" in u for u in asked)}


def bench(rev: str | None) -> dict:
    """``{bundle: {"named": [visit], "auto": [visit]}}`` for the current bundle (and revision ``rev``'s)."""
    with tempfile.TemporaryDirectory() as tmp, running_server(
            Path(tmp), extra_env={"IBWEB_TSDB_INTERVAL_S": "1"}) as server, chromium_page(
            {"width": 1400, "height": 1000}, signed_in=server) as page:
        started = time.monotonic()
        bundles = [CURRENT]
        serving = [CURRENT]
        if rev:
            bundles.insert(0, f"frontend/src at {rev}")
            dist = build_bundle(rev, Path(tmp) / "bundle")

            def serve(route, _request, name: str) -> None:
                if serving[0] == CURRENT:
                    route.continue_()
                else:
                    route.fulfill(path=str(dist / name),
                                  content_type="text/css" if name.endswith("css") else "text/javascript")
            for name in ("ibweb-pages.js", "ibweb.js", "ibweb.css"):
                page.route(f"**/static/ibweb/{name}", lambda route, request, name=name: serve(route, request, name))
        asked: list[str] = []
        page.on("request", lambda r: asked.append(r.url))
        ports = hottest(server, "demo", PORTS, 180)
        time.sleep(max(0.0, WARM_S - (time.monotonic() - started)))
        named = (f"{server.url}/fabrics/demo/history/?range=1h&ports="
                 + ",".join(f"{p['node']}:{p['port']}" for p in ports))
        auto = f"{server.url}/fabrics/demo/history/?range=1h"
        out = {b: {"named": [], "auto": []} for b in bundles}
        for key, url, n in (("named", named, PORTS), ("auto", auto, AUTO)):
            for k in range(VISITS + 1):  # the first of each: a warm-up
                for b in bundles:  # alternating: both see the same store and the same load
                    serving[0] = b
                    got = visit(page, url, n, asked)
                    if k:
                        out[b][key].append(got)
        if page.errors:
            raise AssertionError(page.errors)
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bundle-rev", help="measure the History page of this git revision's frontend/src")
    args = parser.parse_args()
    print(machine())
    r = bench(args.bundle_rev)
    for key, n in (("named", PORTS), ("auto", AUTO)):
        for what in r:
            v = r[what][key]
            print(f"History page on the demo ({what}), {n} ports charted over the last hour "
                  f"({'named in the address' if key == 'named' else 'the hottest, none named'}), {len(v)} visits: "
                  f"API requests {statistics.median(x['requests'] for x in v):.0f} "
                  f"({statistics.median(x['tsdb'] for x in v):.0f} of the per-port history), "
                  f"first chart median {statistics.median(x['first'] for x in v):.0f} ms, "
                  f"all charts median {statistics.median(x['all'] for x in v):.0f} ms "
                  f"(worst {max(x['all'] for x in v):.0f} ms) after navigation; "
                  f"{v[-1]['bins']:,} bins drawn; load average {os.getloadavg()[0]:.1f}", flush=True)
    every = statistics.median(x["all"] for x in r[CURRENT]["named"])
    ok = target(f"History page on the demo, all {PORTS} charts drawn after navigation (median)", every,
                ALL_CHARTS_MS, "ms")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
