"""The dashboard in real headless Chromium against the real server (issue 8).

The page runs under the server's content security policy (no eval), so waits poll
``page.evaluate`` instead of ``page.wait_for_function``.
"""

import signal
from pathlib import Path

import pytest

from fabric_engine.scenario import DEMO_SPEC, build_fabric
from tests.support.browser import chromium_page, poll
from tests.support.server import running_server

pytestmark = pytest.mark.browser

SCREENSHOTS = Path(__file__).resolve().parents[2] / "docs" / "screenshots"
DEMO = build_fabric(DEMO_SPEC["topology"])
L = DEMO.num_links


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    with running_server(tmp_path_factory.mktemp("e2e")) as srv:
        yield srv


def api(server, path: str) -> dict:
    return server.get_json(f"/api/fabrics/fabrics/demo/{path}")


def open_demo(page, server, catalog: bool = False):
    violations: list[str] = []
    page.on("console", lambda m: violations.append(m.text) if "Content Security Policy" in m.text else None)
    page.csp_violations = violations
    page.goto(server.url + "/fabrics/demo/")
    poll(page, "window.ibweb && window.ibweb.ready === true", 30)
    if catalog:
        poll(page, "window.ibweb.catalog > 0")


def shot(page, name: str, selector: str | None = None) -> None:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    target = page.locator(selector) if selector else page
    target.screenshot(path=str(SCREENSHOTS / name))


def test_fabric_list_links_to_the_demo(server):
    with chromium_page(signed_in=server) as page:
        page.goto(server.url + "/")
        link = page.get_by_role("link", name="Demo: 512-GPU NDR fat tree")
        link.click()
        page.wait_for_url("**/fabrics/demo/")


def test_topology_draws_links_and_colors_change_between_frames(server):
    with chromium_page(signed_in=server) as page:
        open_demo(page, server)
        assert page.evaluate("window.ibweb.drawnLinks") == L
        digests = {page.evaluate("window.ibweb.colorDigest()")}
        first = page.evaluate("window.ibweb.seq")
        for _ in range(4):
            seq = page.evaluate("window.ibweb.seq")
            poll(page, f"window.ibweb.seq > {seq}", 10)
            digests.add(page.evaluate("window.ibweb.colorDigest()"))
        assert page.evaluate("window.ibweb.seq") >= first + 4
        assert len(digests) > 1, "link colors never changed across frames"
        assert page.evaluate("window.ibweb.status") == "live"
        assert page.get_by_text("Hosts").count() >= 1
        stats = page.evaluate("({n: window.ibweb.stats.renderMs.length, median: window.ibweb.stats.median})")
        assert stats["n"] >= 4 and stats["median"] > 0
        shot(page, "dashboard.png")
        assert page.errors == [] and page.csp_violations == []


def test_hover_shows_the_tooltip_of_a_known_link(server):
    d = 600  # a leaf-to-spine cable of the demo
    a, b = str(DEMO.node_name[DEMO.a_node[d]]), str(DEMO.node_name[DEMO.b_node[d]])
    with chromium_page(signed_in=server) as page:
        open_demo(page, server)
        point = page.evaluate(f"window.ibweb.linkAt({d})")
        page.mouse.move(point["x"], point["y"])
        text = poll(page, "window.ibweb.tooltipText()")
        assert text.splitlines()[0] == f"{a} port {DEMO.a_port[d]} ⇄ {b} port {DEMO.b_port[d]}"
        assert f"{a}:{DEMO.a_port[d]} → {b}:{DEMO.b_port[d]}" in text and "Gb/s" in text
        assert page.locator(".ibweb-topology .ibweb-tooltip").is_visible()
        page.mouse.move(2, 2)
        poll(page, "window.ibweb.tooltipText() === ''")


def test_clicking_a_link_shows_its_history_chart_from_the_api(server):
    d = 40  # host cable gpu -> leaf
    with chromium_page(signed_in=server) as page:
        open_demo(page, server)
        poll(page, "window.ibweb.seq >= 3")
        point = page.evaluate(f"window.ibweb.linkAt({d})")
        page.mouse.click(point["x"], point["y"])
        state = poll(page, "window.ibweb.detail.points >= 2 && window.ibweb.detail")
        assert state["cable"] == d and state["error"] == ""
        served = api(server, f"links/{d}/history/?seconds=300")
        assert served["link"] == d and served["reverse"] == d + L
        assert abs(len(served["t"]) - state["points"]) <= 6  # the chart refetches every 5 s
        paths = page.eval_on_selector_all(".ibweb-detail path.ibweb-series", "ps => ps.map(p => p.getAttribute('d'))")
        assert len(paths) == 2 and all(p and p.count("L") >= 1 for p in paths)
        title = page.locator(".ibweb-detail h2").inner_text().lower()
        assert str(DEMO.node_name[DEMO.a_node[d]]).lower() in title
        # the last hour of both directions, each labelled with its sending end (issue 35)
        there, back = poll(page, "window.ibweb.detail.rollups.length === 2 && window.ibweb.detail")["rollups"]
        ends = [line.removeprefix("last hour, ").split(": ")[0].split(" -> ") for line in (there, back)]
        assert ends[0] == ends[1][::-1] and ends[0][0].endswith(f" port {DEMO.a_port[d]}"), (there, back)
        shot(page, "port-detail.png", ".ibweb-lower")
        page.get_by_role("button", name="Close the port detail").click()
        poll(page, "window.ibweb.detail.cable === -1")


def test_matrix_shows_a_cell_per_leaf_and_spine_with_hover(server):
    with chromium_page(signed_in=server) as page:
        open_demo(page, server)
        leaves, spines = int((DEMO.tier == 1).sum()), int((DEMO.tier == 2).sum())  # 16 GPU leaves + 1 storage leaf
        cabled = int(((DEMO.tier[DEMO.a_node] == 1) & (DEMO.tier[DEMO.b_node] == 2)).sum()
                     + ((DEMO.tier[DEMO.a_node] == 2) & (DEMO.tier[DEMO.b_node] == 1)).sum())
        assert (leaves, spines) == (17, 32)
        assert page.evaluate("window.ibweb.matrix") == {"rows": leaves, "cols": spines, "cabled": cabled,
                                                        "tiers": [1, 2]}
        assert page.locator(".ibweb-matrix select").first.is_disabled()  # a 2-level tree has no spine x core
        point = page.evaluate("window.ibweb.matrixCellAt(0, 0)")
        page.mouse.move(point["x"], point["y"])
        text = poll(page, "window.ibweb.matrixTooltip()")
        leaf, spine = str(DEMO.node_name[DEMO.switches[0]]), None
        lines = text.splitlines()
        assert lines[0].startswith(f"{leaf} ⇄ spine") and lines[1] == "1 cable" and "up" in lines[2]
        spine = lines[0].split(" ⇄ ")[1]
        page.mouse.click(point["x"], point["y"])
        state = poll(page, "window.ibweb.detail.cable >= 0 && window.ibweb.detail")
        c = state["cable"]
        assert {str(DEMO.node_name[DEMO.a_node[c]]), str(DEMO.node_name[DEMO.b_node[c]])} == {leaf, spine}
        shot(page, "matrix.png", ".ibweb-matrix")


def test_selecting_a_job_highlights_its_hosts_and_links(server):
    jobs = {j["id"]: j for j in api(server, "jobs/")["jobs"]}
    job = jobs["llama-70b"]
    cables = {d % L for d in job["links"]}
    with chromium_page(signed_in=server) as page:
        open_demo(page, server, catalog=True)
        row = page.locator(".ibweb-jobs-table tbody tr").filter(has_text="llama-70b")
        row.click()
        h = poll(page, "window.ibweb.highlight")
        assert h == {"kind": "job", "label": "llama-70b", "cables": len(cables), "nodes": len(job["hosts"])}
        poll(page, f"window.ibweb.highlightedLinks === {len(cables)}")
        assert row.get_attribute("aria-selected") == "true"
        assert page.evaluate("window.ibweb.selectedJob") == "llama-70b"
        shot(page, "job-highlight.png")
        row.focus()
        page.keyboard.press("Enter")  # the keyboard toggles it off
        poll(page, "window.ibweb.highlight === null && window.ibweb.highlightedLinks === 0")


def test_tenant_filter_highlights_the_tenants_hosts_and_links(server):
    jobs = api(server, "jobs/")["jobs"]
    mine = [j for j in jobs if j["tenant"] == "globex"]
    hosts = {h for j in mine for h in j["hosts"]}
    cables = {d % L for j in mine for d in j["links"]}
    pkeys = server.get_json("/api/tenancy/fabrics/demo/pkeys/")
    members = {g["node"] for p in pkeys.values() if p["tenant"] == "globex" for g in p["guids"]}
    assert members  # the demo gives every tenant a partition of its jobs' hosts
    with chromium_page(signed_in=server) as page:
        open_demo(page, server, catalog=True)
        select = page.get_by_label("Highlight a tenant")
        assert set(select.locator("option").all_inner_texts()) == {"all tenants", "acme", "globex", "initech"}
        select.select_option("globex")
        h = poll(page, "window.ibweb.highlight && window.ibweb.highlight.label.includes('(') && window.ibweb.highlight")
        assert h == {"kind": "tenant", "label": "globex (globex-jobs 0x0102)", "cables": len(cables),
                     "nodes": len(hosts | members)}
        poll(page, f"window.ibweb.highlightedLinks === {len(cables)}")
        shot(page, "tenant-filter.png")
        select.select_option("")
        poll(page, "window.ibweb.highlight === null")


def test_path_view_draws_the_routed_path(server):
    src, dst = "gpu0001", "gpu0512"
    served = api(server, f"path/?src={src}&dst={dst}")
    with chromium_page(signed_in=server) as page:
        open_demo(page, server)
        page.get_by_label("From", exact=True).fill(src)
        page.get_by_label("To", exact=True).fill(dst)
        page.get_by_role("button", name="Path", exact=True).click()
        h = poll(page, "window.ibweb.highlight")
        assert h == {"kind": "path", "label": f"{src} → {dst}", "cables": len(served["links"]),
                     "nodes": len(served["hops"])}
        poll(page, f"window.ibweb.highlightedLinks === {len(served['links'])}")
        text = page.locator(".ibweb-path-out").inner_text()
        assert text.startswith(f"{src}:1 → {served['hops'][1]['name']}:") and text.endswith(dst)
        shot(page, "path.png")
        page.get_by_label("From", exact=True).fill("no-such-host")
        page.get_by_role("button", name="Path", exact=True).click()
        poll(page, "document.querySelector('.ibweb-path-out').textContent.includes('no-such-host')")


def test_hotspots_list_links_with_their_jobs_and_select_them(server):
    with chromium_page(signed_in=server) as page:
        open_demo(page, server, catalog=True)
        rows = poll(page, "window.ibweb.hotspots.length > 0 && window.ibweb.hotspots")
        loads = [r["congestion"] for r in rows]
        assert loads == sorted(loads, reverse=True)
        assert any(r["jobs"] for r in rows), "no hotspot names a job"
        before = {r["link"] % L for r in page.evaluate("window.ibweb.hotspots")}
        page.locator(".ibweb-hotspots tbody button").first.click()
        state = poll(page, "window.ibweb.detail.cable >= 0 && window.ibweb.detail")
        after = {r["link"] % L for r in page.evaluate("window.ibweb.hotspots")}
        assert state["cable"] in before | after
        shot(page, "panels.png", ".ibweb-side")


def test_controls_are_labelled_and_frames_do_not_move_the_layout(server):
    with chromium_page(signed_in=server) as page:
        open_demo(page, server, catalog=True)
        controls = "#ibweb button, #ibweb select, #ibweb input, #ibweb canvas, #ibweb [tabindex]"
        unlabelled = page.evaluate(f"""[...document.querySelectorAll('{controls}')]
            .filter(el => !(el.labels?.length || el.getAttribute('aria-label') || el.textContent.trim()))
            .map(el => el.outerHTML.slice(0, 80))""")
        assert unlabelled == []
        boxes = """[...document.querySelectorAll('.ibweb-map, .ibweb-matrix, .ibweb-detail, .ibweb-side > section')]
            .map(el => { const r = el.getBoundingClientRect(); return [r.x, r.y, r.width, r.height]; })"""
        before = page.evaluate(boxes)
        seq = page.evaluate("window.ibweb.seq")
        poll(page, f"window.ibweb.seq >= {seq + 3}")
        assert page.evaluate(boxes) == before
        page.keyboard.press("Tab")
        assert page.evaluate("document.activeElement !== document.body")


def test_status_turns_stale_when_the_server_stops_sending_and_live_again(server):
    with chromium_page(signed_in=server) as page:
        open_demo(page, server)
        server.proc.send_signal(signal.SIGSTOP)
        try:
            poll(page, "window.ibweb.status === 'stale'", 15)
            assert "stale" in page.locator(".ibweb-state").inner_text()
            shot(page, "stale.png", ".ibweb-status")
        finally:
            server.proc.send_signal(signal.SIGCONT)
        seq = page.evaluate("window.ibweb.seq")
        poll(page, f"window.ibweb.status === 'live' && window.ibweb.seq > {seq}", 15)


def test_policy_page_links_to_the_topology_with_the_tenant_highlighted(server):
    with chromium_page(signed_in=server) as page:
        page.goto(server.url + "/tenancy/fabrics/demo/")
        page.get_by_role("link", name="on the map").first.click()  # the summary's link of the first tenant
        page.wait_for_url("**/fabrics/demo/?tenant=*")
        tenant = page.url.split("tenant=")[1]
        poll(page, "window.ibweb && window.ibweb.ready === true", 30)
        highlight = poll(page, "window.ibweb.highlight && window.ibweb.highlight.kind === 'tenant' "
                               "&& window.ibweb.highlight")
        assert highlight["label"].split(" ")[0] == tenant
        assert page.locator(".ibweb-tenant select").input_value() == tenant
