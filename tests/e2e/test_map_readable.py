"""A map an operator can read, in real headless Chromium against the real server, on a 24-node fabric.

Node names are labelled where they fit (every node of 24 at 1400 px; hosts once zoomed in when the map is narrow),
and never touched by a frame. A new topology (nodes listed in another order, a host gone and a new one on its leaf,
a spine cable cut) keeps every node where it was, by GUID. Hovering a cable names both ends, width and speed, state
and utilization. Condition alerts of the newest frame draw a down cable dashed red between its nodes and a degraded
one dashed in its place, read from the canvas' pixels, and hovering them tells the alert and since when.

The topology change and the alerts are sent to the page by the test: Playwright stands between the page and the
server's feed (``page.route_web_socket``), passes the server's messages on, then speaks in its place with a snapshot
and frames built by hand from the server's own snapshot.
"""

from __future__ import annotations

import json
import re
import time

import pytest

from tests.support.browser import chromium_page, poll
from tests.support.server import running_server

pytestmark = pytest.mark.browser

LAB = {"name": "Lab: 16-GPU fat tree", "slug": "lab", "tick_s": 1.0,
       "spec": {"topology": {"generator": "fat_tree", "hosts": 16, "radix": 8}}}

#: Node GUID -> [x, y] of every node labelled on the map (a label's transform puts it on its node), px in the map.
LABELS = """() => Object.fromEntries([...document.querySelectorAll('.ibweb-topology .ibweb-label')].map((el) => {
  const m = /translate\\(([-\\d.e]+)px, ([-\\d.e]+)px\\)/.exec(el.style.transform);
  return [el.dataset.guid, [Number(m[1]), Number(m[2])]]; }))"""
#: Colours [r, g, b] of the map's canvas at points [x, y] (px in the map).
PIXELS = """(points) => { const c = document.querySelector('.ibweb-topology canvas'); const g = c.getContext('2d');
  const dpr = c.width / c.clientWidth;
  return points.map(([x, y]) => [...g.getImageData(Math.round(x * dpr), Math.round(y * dpr), 1, 1).data]
    .slice(0, 3)); }"""
ARIA = "document.querySelector('.ibweb-topology canvas').getAttribute('aria-label')"


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    with running_server(tmp_path_factory.mktemp("readable"), fabrics=[LAB]) as srv:
        yield srv


class FeedProxy:
    """The page's feed through Playwright: the server's messages go through until the test speaks instead."""

    def __init__(self, page, slug: str) -> None:
        self.snapshot: dict | None = None
        self.forward = True
        self.route = None
        page.route_web_socket(re.compile(rf".*/ws/fabrics/{slug}/live/.*"), self._connect)

    def _connect(self, route) -> None:
        self.route = route
        route.connect_to_server().on_message(self._from_server)

    def _from_server(self, message) -> None:
        if isinstance(message, str) and self.snapshot is None:
            msg = json.loads(message)
            if msg.get("type") == "snapshot":
                self.snapshot = msg
        if self.forward:
            self.route.send(message)

    def send(self, msg: dict) -> None:
        self.forward = False
        self.route.send(json.dumps(msg))


def changed(snapshot: dict, gone: str, new: tuple[str, str], cut: tuple[str, str]) -> tuple[dict, dict]:
    """The snapshot's fabric rediscovered: nodes in reverse order, host ``gone`` replaced on its leaf port by host
    ``new`` (name, GUID) listed among the others, the first cable between the nodes ``cut`` gone, cables in reverse.
    Returns the snapshot message and what the test needs: ``cut`` {a, b, aPort, bPort} as new indices."""
    nodes, links = snapshot["topology"]["nodes"], snapshot["topology"]["links"]
    names = nodes["name"]
    n, L = len(names), len(links["a_node"])
    h = names.index(gone)
    h_cable = next(c for c in range(L) if h in (links["a_node"][c], links["b_node"][c]))
    cut_cable = next(c for c in range(L) if {names[links["a_node"][c]], names[links["b_node"][c]]} == set(cut))
    order = [i for i in reversed(range(n)) if i != h]
    order.insert(5, -1)  # the new host, among the others
    at = {old: k for k, old in enumerate(order)}
    new_nodes = {key: [] for key in nodes}
    for old in order:
        for key in nodes:
            new_nodes[key].append(nodes[key][old] if old >= 0 else nodes[key][h])
    k_new = order.index(-1)
    new_nodes["name"][k_new], new_nodes["guid"][k_new], new_nodes["lid"][k_new] = new[0], new[1], 999
    new_links = {key: [] for key in links}
    for c in reversed(range(L)):
        if c == cut_cable:
            continue
        for key in links:
            value = links[key][c]
            if key in ("a_node", "b_node"):
                value = k_new if value == h and c == h_cable else at[value]
            new_links[key].append(value)
    ends = {"a": at[links["a_node"][cut_cable]], "b": at[links["b_node"][cut_cable]],
            "aPort": links["a_port"][cut_cable], "bPort": links["b_port"][cut_cable]}
    msg = {"v": 1, "type": "snapshot", "fabric": snapshot["fabric"],
           "topology": {**snapshot["topology"], "nodes": new_nodes, "links": new_links}, "frame": None}
    return msg, ends


def frame(snapshot: dict, seq: int, util: dict[int, float] | None = None, alerts: list | None = None) -> dict:
    """A v1 frame by hand: every cable at 10% but those of ``util`` (the reverse direction at half), with ``alerts``."""
    links = snapshot["topology"]["links"]
    L = len(links["a_node"])
    u = [0.1] * (2 * L)
    for c, value in (util or {}).items():
        u[c], u[c + L] = value, value / 2
    rate = [x * links["capacity_gbps"][d % L] for d, x in enumerate(u)]
    hosts = snapshot["topology"]["nodes"]["kind"].count("host")
    return {"v": 1, "type": "frame", "seq": seq, "t": time.time(), "tick_s": 1.0, "rate": rate, "util": u,
            "totals": {"hosts": hosts, "switches": len(snapshot["topology"]["nodes"]["kind"]) - hosts, "links": L,
                       "throughput_gbps": sum(rate), "hottest": {"link": 0, "util": max(u)}, "congested_links": 0},
            "jobs": [], "alerts": alerts or [], "hotspots": []}


def along(p: list[float], q: list[float], count: int = 80) -> list[list[float]]:
    """Points on the segment p-q, away from its ends (the nodes)."""
    return [[p[0] + t * (q[0] - p[0]), p[1] + t * (q[1] - p[1])]
            for t in (0.2 + 0.6 * j / (count - 1) for j in range(count))]


def runs(flags: list[bool]) -> int:
    """How many times a sequence of flags changes."""
    return sum(1 for x, y in zip(flags, flags[1:], strict=False) if x != y)


def red(rgb) -> bool:
    """Red, or red blended with the background (a line's antialiased edge): the utilization scale (Cividis) has none."""
    return rgb[0] > 40 and rgb[0] > 1.8 * rgb[1] and rgb[0] > 1.8 * rgb[2]


def bright(rgb) -> int:
    return max(rgb)


def open_lab(page, server):
    page.goto(server.url + "/fabrics/lab/")
    poll(page, "window.ibweb && window.ibweb.ready === true", 60)


def test_every_node_of_a_small_fabric_is_labelled_and_frames_leave_the_labels_alone(server):
    with chromium_page({"width": 1400, "height": 900}, signed_in=server) as page:
        open_lab(page, server)
        labels = poll(page, f"(() => {{ const l = ({LABELS})(); return Object.keys(l).length === 24 && l; }})()", 10)
        names = page.eval_on_selector_all(".ibweb-topology .ibweb-label", "ls => ls.map((l) => l.textContent)")
        assert sorted(names) == sorted([f"leaf{i:02d}" for i in range(1, 5)] + [f"spine{i:02d}" for i in range(1, 5)]
                                       + [f"gpu{i:04d}" for i in range(1, 17)])
        # the hosts' row is the lowest, the spines' the highest
        ys = {name: labels[guid][1] for name, guid in zip(
            names, page.eval_on_selector_all(".ibweb-topology .ibweb-label", "ls => ls.map((l) => l.dataset.guid)"),
            strict=True)}
        assert ys["spine01"] < ys["leaf01"] < ys["gpu0001"]

        # frames come and go: no label is added, removed, moved or renamed
        page.evaluate("""() => { window.labelChanges = 0; new MutationObserver((r) => window.labelChanges += r.length)
            .observe(document.querySelector('.ibweb-labels'), {subtree: true, childList: true, attributes: true,
                                                               characterData: true}); }""")
        seq = page.evaluate("window.ibweb.seq")
        poll(page, f"window.ibweb.seq >= {seq + 3}", 15)
        assert page.evaluate("window.labelChanges") == 0

        # a narrower map (736 px) has no room for host names; zoomed in, the hosts on screen are named
        page.set_viewport_size({"width": 1280, "height": 800})
        poll(page, "document.querySelectorAll('.ibweb-label-host').length === 0", 10)
        assert page.evaluate("document.querySelectorAll('.ibweb-label').length") == 8, "the switches keep theirs"
        page.locator(".ibweb-topology canvas").focus()
        for _ in range(2):
            page.keyboard.press("+")
            page.wait_for_timeout(300)
        hosts = poll(page, "document.querySelectorAll('.ibweb-label-host').length", 10)
        assert 0 < hosts < 16
        width = page.evaluate("document.querySelector('.ibweb-topology').clientWidth")
        xs = [x for x, _ in page.evaluate(LABELS).values()]
        assert all(0 <= x <= width for x in xs), "a label of a node off screen"

        # the names can be switched off and on
        page.get_by_role("button", name="Node names").click()
        poll(page, "document.querySelectorAll('.ibweb-label').length === 0", 5)
        page.get_by_role("button", name="Node names").click()
        poll(page, "document.querySelectorAll('.ibweb-label').length > 8", 5)
        assert page.errors == []


def test_a_new_topology_keeps_nodes_in_place_and_cables_tell_their_state(server):
    with chromium_page({"width": 1400, "height": 900}, signed_in=server) as page:
        proxy = FeedProxy(page, "lab")
        open_lab(page, server)
        before = poll(page, f"(() => {{ const l = ({LABELS})(); return Object.keys(l).length === 24 && l; }})()", 10)
        assert proxy.snapshot is not None
        old = proxy.snapshot["topology"]["nodes"]
        gone_guid = old["guid"][old["name"].index("gpu0006")]

        msg, cut = changed(proxy.snapshot, "gpu0006", ("gpu0017", "0x00000000feed0017"), ("leaf02", "spine03"))
        L = len(msg["topology"]["links"]["a_node"])
        assert len(proxy.snapshot["topology"]["links"]["a_node"]) - 1 == L
        proxy.send(msg)
        proxy.send(frame(msg, 1))
        poll(page, f"{ARIA}.includes('{L} cables')", 10)
        after = poll(page, f"(() => {{ const l = ({LABELS})(); return l['0x00000000feed0017'] && l; }})()", 10)
        assert len(after) == 24
        common = set(before) & set(after)
        assert len(common) == 23
        moved = {g: (before[g], after[g]) for g in common
                 if abs(before[g][0] - after[g][0]) > 0.01 or abs(before[g][1] - after[g][1]) > 0.01}
        assert moved == {}, f"nodes moved: {moved}"
        assert after["0x00000000feed0017"] == pytest.approx(before[gone_guid], abs=0.01), "not in the free slot"

        # hovering a leaf-to-spine cable: both ends with their ports, width and speed, state, utilization
        nodes, links = msg["topology"]["nodes"], msg["topology"]["links"]
        name = nodes["name"]
        ends = [(name[links["a_node"][c]], name[links["b_node"][c]]) for c in range(L)]
        c = next(c for c, (a, b) in enumerate(ends) if {a[:4], b[:4]} == {"leaf", "spin"})  # leaf to spine
        h = next(c for c, (a, b) in enumerate(ends) if "gpu" in (a[:3], b[:3]))  # a host's cable
        proxy.send(frame(msg, 2, util={c: 0.42, h: 0.9}))
        poll(page, "window.ibweb.seq === 2", 10)
        point = page.evaluate(f"window.ibweb.linkAt({c})")
        page.mouse.move(point["x"], point["y"])
        text = poll(page, "window.ibweb.tooltipText()", 10)
        a, b = name[links["a_node"][c]], name[links["b_node"][c]]
        lines = text.splitlines()
        assert lines[0] == f"{a} port {links['a_port'][c]} ⇄ {b} port {links['b_port'][c]}"
        assert f"{links['width'][c]}x {links['speed'][c]}" in text
        assert "state up, utilization 42%" in lines
        page.mouse.move(2, 2)
        poll(page, "window.ibweb.tooltipText() === ''", 5)

        # the cut cable is down, the host cable h degraded: drawn dashed, named on hover, whatever the map shows
        box = page.evaluate("(() => { const r = document.querySelector('.ibweb-topology').getBoundingClientRect();"
                            " return [r.left, r.top]; })()")
        pos = page.evaluate(LABELS)
        p, q = pos[nodes["guid"][cut["a"]]], pos[nodes["guid"][cut["b"]]]
        hp, hq = pos[nodes["guid"][links["a_node"][h]]], pos[nodes["guid"][links["b_node"][h]]]
        gone_line = page.evaluate(PIXELS, along(p, q))
        assert not any(red(px) for px in gone_line), "red where no cable is"
        host_line = page.evaluate(PIXELS, along(hp, hq, 160))
        since = time.time() - 125
        down = {"kind": "link_down", "severity": "critical", "condition": True, "since": since,
                "nodes": [cut["a"], cut["b"]], "ports": [cut["aPort"], cut["bPort"]],
                "a": f"{name[cut['a']]} port {cut['aPort']}", "b": f"{name[cut['b']]} port {cut['bPort']}", "cable": -1,
                "message": f"link down: {name[cut['a']]} port {cut['aPort']} - {name[cut['b']]} port {cut['bPort']}"}
        narrower = {"kind": "width_degraded", "severity": "warning", "condition": True, "since": since,
                    "nodes": [links["a_node"][h], links["b_node"][h]],
                    "ports": [links["a_port"][h], links["b_port"][h]],
                    "a": "x", "b": "y", "cable": h, "old": "4x", "new": "1x", "message": "width 4x -> 1x"}
        gone_node = {**down, "nodes": [-1, cut["b"]]}  # a node not in the fabric: nothing drawn
        proxy.send(frame(msg, 3, util={c: 0.42, h: 0.9}, alerts=[down, narrower, gone_node]))
        poll(page, f"{ARIA}.includes('1 down, 1 degraded')", 10)
        page.wait_for_timeout(100)
        dashed = [red(px) for px in page.evaluate(PIXELS, along(p, q))]
        assert 0.3 < sum(dashed) / len(dashed) < 0.9, f"{sum(dashed)} of {len(dashed)} red"
        assert runs(dashed) >= 6, "not dashed"
        now = page.evaluate(PIXELS, along(hp, hq, 160))
        darker = [bright(x) > 60 and bright(y) < 40 for x, y in zip(host_line, now, strict=True)]
        assert sum(darker) > 0.15 * len(darker), "no gaps along the degraded cable"
        assert runs(darker) >= 6, "the degraded cable is not dashed"
        assert not any(red(px) for px in now), "a degraded cable is not drawn red"

        middle = [(p[0] + q[0]) / 2, (p[1] + q[1]) / 2]
        page.mouse.move(box[0] + middle[0], box[1] + middle[1])
        text = poll(page, "window.ibweb.tooltipText().includes('down') && window.ibweb.tooltipText()", 10)
        assert text.splitlines()[0] == f"{down['a']} ⇄ {down['b']}"
        assert "since " in text and "(2 min 0" in text and down["message"] in text
        point = page.evaluate(f"window.ibweb.linkAt({h})")
        page.mouse.move(point["x"], point["y"])
        text = poll(page, "window.ibweb.tooltipText().includes('degraded') && window.ibweb.tooltipText()", 10)
        assert "state degraded (width 4x → 1x), utilization 90%" in text and "width 4x -> 1x, since " in text

        # the condition clears: the next frame without it draws the cable as before
        page.mouse.move(2, 2)
        proxy.send(frame(msg, 4, util={c: 0.42, h: 0.9}))
        poll(page, f"!{ARIA}.includes('down,')", 10)
        page.wait_for_timeout(100)
        assert not any(red(px) for px in page.evaluate(PIXELS, along(p, q)))
        assert page.errors == []
