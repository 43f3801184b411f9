"""What a hostile or heavy request costs, and whether ``/healthz`` answers meanwhile (issue 26, item 3).

1. The gzip bomb of the finding (about 260 KB that inflates to 256 MiB of zeros), read in a fresh process the
   way an upload was read before (:func:`fabric_engine.formats.detect_bytes` and ``read`` with no limit but
   4 GiB) and the way it is now (:func:`ibweb.http.inflate.inflated` with the upload limit and the 100:1 ratio):
   wall time and peak RSS above the interpreter's.
2. A real server (``python -m ibweb.serve``): the bomb POSTed five times as a fabric's topology file, then a
   ``partitions.conf`` of 3,000 partitions imported through the API, then a heavy preview (the gzipped
   ibnetdiscover file of a 16,384-host fat tree, read and summarised) - each while a client polls
   ``/healthz`` every 20 ms. Reports each request's time, the server's peak RSS growth, and ``/healthz``
   latency (median, max) during each; for the preview also a light Django view's latency beside it
   (what ``/healthz`` would cost through Django's middleware: why it is answered before Django).

Before the change: the bomb took 12 s and +500 MB on the server with ``/healthz`` held up to 8.9 s (issue 26's
finding); the 3,000-partition import 24 s there, 9.0 s in-process on this machine (SQLite).

Run: ``.venv/bin/python tests/bench/bench_hostile_requests.py`` (``make bench`` runs it).
"""

from __future__ import annotations

import gzip
import json
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
from tests.bench.targets import machine, target  # noqa: E402
from tests.support.hostile_requests import SUPERUSER, csrf_headers, multipart  # noqa: E402
from tests.support.server import running_server  # noqa: E402

BOMB_BYTES = 256 << 20
N_PARTITIONS = 3000

#: Reads the bomb in a fresh process: ``before`` as uploads were read, ``now`` through ibweb.http.inflate.
_READ = """
import resource, sys, time
sys.path.insert(0, {root!r})
data = open({path!r}, "rb").read()
from fabric_engine.formats import detect_bytes, read
from ibweb.http.inflate import inflated
base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
t = time.perf_counter()
try:
    if {mode!r} == "before":
        read(data, fmt=detect_bytes(data, "bomb.topo.gz"), source="bomb.topo.gz")
    else:
        inflated(data, "bomb.topo.gz", "topology_file", 64 << 20)
    outcome = "accepted"
except Exception as exc:
    outcome = f"{{type(exc).__name__}}: {{str(exc)[:90]}}"
print(time.perf_counter() - t, (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - base) / 1024, outcome, sep="|")
"""


def read_bomb(path: Path, mode: str) -> tuple[float, float, str]:
    code = _READ.format(root=str(ROOT), path=str(path), mode=mode)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT)
    seconds, mib, outcome = out.stdout.strip().splitlines()[-1].split("|", 2)
    return float(seconds), float(mib), outcome


def peak_rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError("no VmHWM")


class HealthPoller:
    """Polls ``/healthz`` every 20 ms in a thread; latencies in ms, by phase."""

    def __init__(self, url: str) -> None:
        self.url, self.phase, self.samples = url + "/healthz", "idle", {}
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        while not self.stop.is_set():
            t = time.perf_counter()
            with urllib.request.urlopen(self.url, timeout=30) as r:
                r.read()
            self.samples.setdefault(self.phase, []).append((time.perf_counter() - t) * 1000)
            time.sleep(0.02)

    def report(self, phase: str) -> tuple[float, float]:
        got = self.samples.get(phase, [float("nan")])
        return statistics.median(got), max(got)


def timed(request: urllib.request.Request) -> tuple[float, int, str]:
    t = time.perf_counter()
    try:
        with urllib.request.urlopen(request, timeout=120) as r:
            code, text = r.status, r.read().decode()
    except urllib.error.HTTPError as exc:
        code, text = exc.code, exc.read().decode()
    return time.perf_counter() - t, code, text


def partitions_conf(guids: list[str]) -> str:
    return "".join(f"p{i}=0x{i + 0x10:04x},ipoib : {guids[i % len(guids)]}=full, {guids[(i + 1) % len(guids)]}, "
                   f"{guids[(i + 7) % len(guids)]}=limited ;\n" for i in range(N_PARTITIONS))


def host_guids(server) -> list[str]:
    """Port GUIDs of the demo fabric's hosts: the members of its exported partitions."""
    from fabric_engine.formats.opensm_partitions import format_guid, parse

    request = urllib.request.Request(server.url + "/api/tenancy/fabrics/demo/opensm/partitions.conf",
                                     headers={"Cookie": server.cookie})
    with urllib.request.urlopen(request, timeout=30) as r:
        specs = parse(r.read().decode())
    return sorted({format_guid(m.target) for s in specs for m in s.members if not isinstance(m.target, str)})


def main() -> int:
    print(machine())
    ok = True
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "bomb.gz"
        path.write_bytes(gzip.compress(b"\0" * BOMB_BYTES, 9))
        size = path.stat().st_size
        print(f"gzip bomb: {size / 1024:.0f} KB inflating to {BOMB_BYTES >> 20} MiB")
        for mode in ("before", "now"):
            seconds, mib, outcome = read_bomb(path, mode)
            print(f"  read {mode:6}: {seconds:.3f} s, peak RSS +{mib:.0f} MiB, {outcome}")
        bomb_s, bomb_mib, _ = read_bomb(path, "now")
        ok &= target("gzip bomb refused, in-process", bomb_s, 0.05, "s")
        ok &= target("gzip bomb peak RSS above the interpreter", bomb_mib, 16, "MiB")

        with running_server(Path(tmp), setup=SUPERUSER) as server:
            headers = csrf_headers(server)
            poller = HealthPoller(server.url)
            time.sleep(1)
            rss0 = peak_rss_mib(server.proc.pid)
            body, kind = multipart({"name": "X", "slug": "x", "topology_file": ("bomb.topo.gz", path.read_bytes())})
            poller.phase = "bomb"
            times = []
            for _ in range(5):
                req = urllib.request.Request(server.url + "/api/fabrics/fabrics/", data=body, method="POST",
                                             headers={**headers, "Content-Type": kind})
                took, code, text = timed(req)
                times.append(took)
                assert code == 400 and "decompression bomb" in text, (code, text[:300])
            poller.phase = "between"
            grown = peak_rss_mib(server.proc.pid) - rss0
            med, worst = poller.report("bomb")
            print(f"server: bomb POST {statistics.median(times) * 1000:.0f} ms (max {max(times) * 1000:.0f}), "
                  f"400 naming the file and the ratio; peak RSS +{grown:.0f} MiB; "
                  f"/healthz meanwhile {med:.1f} ms median, {worst:.1f} ms max")
            ok &= target("gzip bomb POST answered 400 (max of 5)", max(times), 0.5, "s")
            ok &= target("server peak RSS growth over 5 bombs", grown, 64, "MiB")
            ok &= target("/healthz max latency during the bombs", worst, 100, "ms")

            conf = partitions_conf(host_guids(server))
            poller.phase = "import"
            req = urllib.request.Request(server.url + "/api/tenancy/fabrics/demo/opensm/partitions.conf",
                                         data=conf.encode(), method="POST",
                                         headers={**headers, "Content-Type": "text/plain"})
            took, code, text = timed(req)
            poller.phase = "between"
            assert code == 200, (code, text[:300])
            created = len(json.loads(text)["created"])
            med, worst = poller.report("import")
            print(f"server: import of {N_PARTITIONS:,} partitions ({len(conf) / 1024:.0f} kB): {took:.2f} s, "
                  f"{created:,} created; /healthz meanwhile {med:.1f} ms median, {worst:.1f} ms max")
            ok &= target(f"partitions.conf import, {N_PARTITIONS:,} partitions", took, 3, "s")
            ok &= target("/healthz max latency during the import", worst, 100, "ms")

            from fabric_engine.formats import write
            from fabric_engine.topology.generate import fat_tree

            design = gzip.compress(write(fat_tree(hosts=16384, radix=64, levels=3), "ibnetdiscover").encode())
            preview, kind = multipart({"routing_engine": "minhop", "topology_file": ("big.topo.gz", design)})
            req = urllib.request.Request(server.url + "/api/fabrics/preview/", data=preview, method="POST",
                                         headers={**headers, "Content-Type": kind})
            light = []
            result = {}
            worker = threading.Thread(target=lambda: result.update(answer=timed(req)))
            poller.phase = "preview"
            worker.start()
            while worker.is_alive():
                t = time.perf_counter()
                urllib.request.urlopen(server.url + "/api/fabrics/generators/", timeout=120).read()
                light.append((time.perf_counter() - t) * 1000)
            poller.phase = "done"
            took, code, text = result["answer"]
            assert code == 200 and json.loads(text)["valid"] is True, text[:300]
            med, worst = poller.report("preview")
            print(f"server: preview of a 16,384-host fat tree's ibnetdiscover ({len(design) / 2**20:.1f} MiB gzip, "
                  f"8.6 MiB inflated) {took:.2f} s; /healthz meanwhile "
                  f"{med:.1f} ms median, {worst:.1f} ms max; a light Django view beside it "
                  f"{statistics.median(light):.0f} ms median, {max(light):.0f} ms max")
            ok &= target("/healthz max latency during a heavy preview", worst, 100, "ms")
            poller.stop.set()
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
