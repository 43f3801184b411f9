"""The SHARP and storage panels of the dashboard (issue 6), in real headless Chromium against the real server.

What the panels draw (read through ``window.ibweb.sharpRows()`` / ``storageRows()``, and from the page) is
compared with the frame of the same ``seq`` as a websocket client of the same feed received it. The demo's
llama-70b first checkpoints about 40 s into the run, so checkpoint progress is watched on a small extra fabric
that checkpoints every 3 iterations at a 0.25 s tick.
"""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path

import pytest
from websockets.exceptions import ConnectionClosed
from websockets.sync.client import connect

from fabric_engine.scenario import DEMO_SPEC, build_fabric
from tests.support.browser import chromium_page, poll
from tests.support.server import running_server

pytestmark = pytest.mark.browser

SCREENSHOTS = Path(__file__).resolve().parents[2] / "docs" / "screenshots"
CKPT_HOSTS = 8
CKPT_FABRIC = {
    "name": "Checkpoints", "slug": "ckpt", "mode": "emulated", "tick_s": 0.25,
    "spec": {
        "topology": {"generator": "fat_tree", "hosts": 16, "radix": 8, "levels": 2, "speed": "NDR", "name": "ckpt",
                     "storage_servers": 2, "storage_ports": 1},
        "jobs": [{"name": "ckpt-7b", "tenant": "acme", "hosts": CKPT_HOSTS, "placement": "packed", "buffer_gb": 1,
                  "compute_s": 0.2, "read_gbps": 50, "checkpoint": {"params": 7e9, "every": 3}}],
        "storage": {"read_gbps": 320, "write_gbps": 160},
        "seed": 1,
    },
}
SHARP_ON = {"llama-70b", "bert-ft", "rlhf-7b"}
L = build_fabric(DEMO_SPEC["topology"]).num_links


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    with running_server(tmp_path_factory.mktemp("e2e-sharp-storage"), fabrics=[CKPT_FABRIC]) as srv:
        yield srv


class FrameRecorder:
    """A websocket client of a fabric's feed keeping the ``sharp``, ``storage`` and ``jobs`` of every frame by seq."""

    def __init__(self, server, slug: str) -> None:
        self.frames: dict[int, dict] = {}
        self.cond = threading.Condition()
        self.ws = None
        self.error: BaseException | None = None
        opened = threading.Event()
        self.cookie = server.cookie
        self.thread = threading.Thread(target=self._run, args=(f"{server.ws_url}/ws/fabrics/{slug}/live/", opened),
                                       daemon=True)
        self.thread.start()
        assert opened.wait(20), "the feed did not open"
        if self.error is not None:
            raise self.error

    def _run(self, url: str, opened: threading.Event) -> None:
        try:
            with connect(url, max_size=None, open_timeout=20, additional_headers={"Cookie": self.cookie}) as ws:
                self.ws = ws
                opened.set()
                for text in ws:
                    msg = json.loads(text)
                    frame = msg.get("frame") if msg.get("type") == "snapshot" else msg
                    if frame and frame.get("type") == "frame":
                        with self.cond:
                            self.frames[frame["seq"]] = {k: frame.get(k) for k in ("seq", "sharp", "storage", "jobs")}
                            self.cond.notify_all()
        except ConnectionClosed:
            pass
        except Exception as exc:  # noqa: BLE001 - handed to the test thread
            self.error = exc
        finally:
            opened.set()

    def get(self, seq: int, timeout_s: float = 10.0) -> dict | None:
        with self.cond:
            self.cond.wait_for(lambda: seq in self.frames or (self.frames and max(self.frames) > seq), timeout_s)
            return self.frames.get(seq)

    def close(self) -> None:
        if self.ws is not None:
            self.ws.close()
        self.thread.join(5)


def drawn_with_frame(page, recorder: FrameRecorder, hook: str, ready: str = "true") -> tuple[dict, dict]:
    """The panel's rows and the recorded frame of the same seq (``ready``: a JS condition on ``r``, the rows)."""
    for _ in range(20):
        rows = poll(page, f"(() => {{ const r = window.ibweb.{hook}(); return r && r.seq >= 0 && ({ready}) && r; }})()")
        frame = recorder.get(rows["seq"])
        if frame is not None:
            return rows, frame
    raise AssertionError(f"no frame recorded for the seq the page drew ({hook})")


def api(server, slug: str, path: str) -> dict:
    return server.get_json(f"/api/fabrics/fabrics/{slug}/{path}")


def open_fabric(page, server, slug: str) -> None:
    page.goto(f"{server.url}/fabrics/{slug}/")
    poll(page, "window.ibweb && window.ibweb.ready === true", 30)


def shot(page, name: str, selector: str) -> None:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.locator(selector).screenshot(path=str(SCREENSHOTS / name))


def test_sharp_panel_draws_the_newest_frame_and_selects_jobs(server):
    recorder = FrameRecorder(server, "demo")
    try:
        with chromium_page(signed_in=server, viewport={"width": 1400, "height": 1300}) as page:
            open_fabric(page, server, "demo")
            # once every job on SHARP has run an all-reduce on its tree
            rows, frame = drawn_with_frame(page, recorder, "sharpRows",
                                           "r.jobs.length > 0 && r.jobs.every(j => !j.on || j.bytesKeptOffWire > 0)")
            sharp = frame["sharp"]
            summary = rows["summary"]
            assert summary["state"] == "enabled" and summary["generation"] == sharp["generation"] == "quantum2"
            assert (summary["treesInUse"], summary["trees"], summary["perSwitch"], summary["perPort"]) == (
                sharp["trees_in_use"], sharp["trees"], sharp["per_switch"], sharp["per_port"])
            assert summary["treesInUse"] == len(SHARP_ON)
            assert [(s["name"], s["trees"], s["limit"], s["ports"], s["jobs"]) for s in rows["switches"]] == [
                (s["name"], s["trees"], s["limit"], s["ports"], s["jobs"]) for s in sharp["switches"]]
            assert all(0 < s["trees"] <= s["limit"] for s in rows["switches"])

            jobs = {j["id"]: j for j in rows["jobs"]}
            served = {j["id"]: j for j in sharp["jobs"]}
            assert set(jobs) == set(served) == SHARP_ON | {"diffusion-xl"}
            assert {j for j in jobs if jobs[j]["on"]} == SHARP_ON
            assert jobs["diffusion-xl"]["reason"] == served["diffusion-xl"]["reason"]
            assert "initech" in jobs["diffusion-xl"]["reason"]
            for jid, job in jobs.items():
                s = served[jid]
                assert job["bytesAggregated"] == s["bytes_aggregated"]
                assert job["bytesKeptOffWire"] == s["bytes_kept_off_wire"]
                assert job["speedup"] == pytest.approx(s["allreduce_s_without"] / s["allreduce_s_sharp"])
                assert (job["bytesKeptOffWire"] > 0) == (jid in SHARP_ON)
            assert rows["drawn"] == {"switches": len(sharp["switches"]), "jobs": len(sharp["jobs"]),
                                     "events": len(sharp["events"])}

            llama = served["llama-70b"]
            speedup = f"×{llama['allreduce_s_without'] / llama['allreduce_s_sharp']:.2f}"
            row = page.locator(".ibweb-sharp-jobs tbody tr[data-job='llama-70b']")
            texts = row.locator("td").all_inner_texts()
            assert texts[:2] == ["llama-70b", "on"] and texts[-1] == speedup
            off = page.locator(".ibweb-sharp-jobs tbody tr[data-job='diffusion-xl']")
            assert off.get_attribute("data-on") == "false"
            assert off.locator("td.ibweb-reason").inner_text() == served["diffusion-xl"]["reason"]
            assert page.locator(".ibweb-sharp-events li[data-kind='fallback']").count() >= 1
            shot(page, "sharp.png", ".ibweb-sharp")

            poll(page, "window.ibweb.catalog > 0")
            catalog = {j["id"]: j for j in api(server, "demo", "jobs/")["jobs"]}
            cables = {d % L for d in catalog["llama-70b"]["links"]}
            row.click()
            h = poll(page, "window.ibweb.highlight")
            assert h == {"kind": "job", "label": "llama-70b", "cables": len(cables),
                         "nodes": len(catalog["llama-70b"]["hosts"])}, "the same highlight as the jobs table's"
            assert row.get_attribute("aria-selected") == "true"
            assert page.evaluate("window.ibweb.selectedJob") == "llama-70b", "the jobs table follows the selection"
            jobs_row = page.locator(".ibweb-jobs-table tbody tr").filter(has_text="llama-70b")
            assert jobs_row.get_attribute("aria-selected") == "true"
            poll(page, f"window.ibweb.highlightedLinks === {h['cables']}")
            row.focus()
            page.keyboard.press("Enter")  # the keyboard toggles it off
            poll(page, "window.ibweb.highlight === null")
            assert row.get_attribute("aria-selected") == "false"
            assert page.errors == []
    finally:
        recorder.close()


def test_storage_panel_draws_every_server_tenant_and_job_of_the_newest_frame(server):
    recorder = FrameRecorder(server, "demo")
    try:
        with chromium_page(signed_in=server, viewport={"width": 1400, "height": 1600}) as page:
            open_fabric(page, server, "demo")
            rows, frame = drawn_with_frame(page, recorder, "storageRows", "r.servers.length > 0")
            storage = frame["storage"]
            assert rows["modelled"] is True
            servers = rows["servers"]
            assert len(servers) == 8 and all(s["read"] > 0 for s in servers)
            assert [(s["name"], s["read"], s["write"], s["readBottleneck"], s["writeBottleneck"]) for s in servers] == [
                (s["name"], s["read_gbps"], s["write_gbps"], s["read_bottleneck"], s["write_bottleneck"])
                for s in storage["servers"]]
            assert [(s["readCap"], s["writeCap"]) for s in servers] == [
                (min(s["backend_read_gbps"], s["network_gbps"]), min(s["backend_write_gbps"], s["network_gbps"]))
                for s in storage["servers"]]
            assert [(t["id"], t["read"], t["write"]) for t in rows["tenants"]] == [
                (t["tenant"], t["read_gbps"], t["write_gbps"]) for t in storage["tenants"]]
            assert [(j["id"], j["read"], j["write"]) for j in rows["jobs"]] == [
                (j["id"], j["read_gbps"], j["write_gbps"]) for j in storage["jobs"]]
            assert {j["id"] for j in rows["jobs"] if j["read"] > 0} >= {"llama-70b", "vit-huge", "diffusion-xl"}
            [ck] = rows["checkpoints"]
            served_ck = next(j for j in storage["jobs"] if j["id"] == "llama-70b")["checkpoint"]
            assert ck["id"] == "llama-70b" and ck["every"] == served_ck["every"] == 20
            assert ck["nextIteration"] == served_ck["next_iteration"] and ck["size"] == served_ck["size_bytes"]
            assert rows["drawn"] == {"servers": 8, "tenants": len(storage["tenants"]), "jobs": len(storage["jobs"]),
                                     "checkpoints": 1, "recent": len(rows["recent"])}

            first = page.locator(".ibweb-storage-servers tbody tr").first
            assert first.locator("td").first.inner_text() == storage["servers"][0]["name"]
            fill = float(first.locator(".ibweb-read .ibweb-bar-fill").get_attribute("width"))
            assert fill == pytest.approx(100 * servers[0]["read"] / servers[0]["readCap"], rel=1e-3)
            label = first.locator(".ibweb-read").get_attribute("aria-label")
            assert label.startswith("read ") and "Gb/s" in label
            shot(page, "storage.png", ".ibweb-storage")
            assert page.errors == []
    finally:
        recorder.close()


def test_checkpoint_progress_eta_and_cost_follow_the_frames_without_moving_the_page(server):
    recorder = FrameRecorder(server, "ckpt")
    # positions in the side column's content, whatever its scroll
    boxes = """(() => { const side = document.querySelector('.ibweb-side'), top = side.getBoundingClientRect().y;
        const shown = '.ibweb-side > section:not([hidden])';  // a hidden panel (the twin's) has no box
        return [...document.querySelectorAll(`${shown}, .ibweb-storage .ibweb-box, .ibweb-checkpoint`)]
          .map(el => { const r = el.getBoundingClientRect();
                       return [r.x, r.y - top + side.scrollTop, r.width, r.height]; });
        })()"""
    try:
        with chromium_page(signed_in=server, viewport={"width": 1400, "height": 1600}) as page:
            open_fabric(page, server, "ckpt")
            poll(page, "window.ibweb.storageRows().checkpoints.length === 1 && "
                       "!window.ibweb.storageRows().checkpoints[0].writing", 20)
            idle_boxes = page.evaluate(boxes)
            samples = []
            deadline = time.monotonic() + 30
            while len(samples) < 3 and time.monotonic() < deadline:
                # the rows and what the page shows of them, read at once (a frame may land between two reads)
                rows, value, title = page.evaluate("""() => {
                    const box = document.querySelector(".ibweb-checkpoint[data-job='ckpt-7b']");
                    return [window.ibweb.storageRows(), box ? box.querySelector('progress').value : null,
                            box ? box.querySelector('.ibweb-checkpoint-title').innerText : null]; }""")
                ck = rows["checkpoints"][0]
                if ck["writing"] and (not samples or rows["seq"] > samples[-1][0]["seq"]):
                    if samples and ck["progress"] < samples[-1][0]["checkpoints"][0]["progress"]:
                        samples.clear()  # the page skipped to the next checkpoint: start over
                    samples.append((rows, value, title))
                page.wait_for_timeout(60)
            assert len(samples) == 3, "never saw a checkpoint being written"
            writing_boxes = page.evaluate(boxes)
            assert writing_boxes == idle_boxes, "a checkpoint starting moved the page"

            progress = [s[0]["checkpoints"][0]["progress"] for s in samples]
            assert progress == sorted(progress) and 0 < progress[0] < 1
            for rows, value, title in samples:
                ck = rows["checkpoints"][0]
                assert value == pytest.approx(ck["progress"], abs=1e-6)
                assert title.startswith("ckpt-7b: writing ") and "ETA " in title
                assert all(s["writeBottleneck"] == "backend" for s in rows["servers"])

            rows, frame = drawn_with_frame(page, recorder, "storageRows", "r.checkpoints[0].writing")
            served = frame["storage"]["jobs"][0]["checkpoint"]
            ck = rows["checkpoints"][0]
            assert (ck["progress"], ck["bytesWritten"], ck["eta"], ck["elapsed"]) == (
                served["progress"], served["bytes_written"], served["eta_s"], served["elapsed_s"])
            assert ck["bytesNow"] == pytest.approx(served["progress"] * served["size_bytes"])
            assert page.locator(".ibweb-storage-servers td.ibweb-limit").first.inner_text() == "write: backend"
            write_cell = page.locator(".ibweb-storage-servers .ibweb-write").first
            assert write_cell.get_attribute("data-bottleneck") == "backend"
            poll(page, "document.querySelector(\".ibweb-storage-jobs tr[data-id='ckpt-7b'] td:last-child\")"
                       ".textContent === 'checkpoint'", 5)
            shot(page, "storage-checkpoint.png", ".ibweb-storage")

            rows, frame = drawn_with_frame(page, recorder, "storageRows", "r.recent.length > 0")
            served = frame["storage"]["jobs"][0]["checkpoint"]
            last = rows["recent"][0]
            assert last["job"] == "ckpt-7b" and last["count"] == served["count"] >= 1
            assert (last["s"], last["gpuS"]) == (served["last_s"], served["last_gpu_s"])
            assert last["gpuS"] == pytest.approx(last["s"] * CKPT_HOSTS)
            text = page.locator(".ibweb-checkpoint-log li[data-job='ckpt-7b']").first.inner_text()
            assert text.startswith(f"ckpt-7b #{last['count']}: ") and "GPU·s" in text
            assert page.evaluate(boxes) == idle_boxes
            assert page.errors == []
    finally:
        recorder.close()
