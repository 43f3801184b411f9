"""The map of a big fabric: switch cables in bundles while zoomed out, one by one after a drill-down (issue 15)."""

import pytest

from fabric_engine.scenario import loaded_rail_spec
from tests.support.browser import chromium_page, poll
from tests.support.server import running_server

pytestmark = pytest.mark.browser

#: 4,096 GPUs of the loaded rail-optimized fabric: 8,192 switch-to-switch cables, 16 scalable units.
SPEC = loaded_rail_spec(4096)


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    fields = {"name": "Rail 4096", "slug": "rail-4096", "tick_s": 1.0, "spec": SPEC}
    with running_server(tmp_path_factory.mktemp("scale"), fabrics=[fields]) as srv:
        yield srv


def test_bundles_when_zoomed_out_and_cables_one_by_one_in_a_drilled_down_unit(server):
    with chromium_page({"width": 1600, "height": 1000}, signed_in=server) as page:
        page.goto(server.url + "/fabrics/rail-4096/")
        poll(page, "window.ibweb && window.ibweb.ready === true", 120)
        bundles = page.evaluate("window.ibweb.bundles")
        assert 0 < bundles < 2000
        assert page.evaluate("window.ibweb.drawnLinks") == 0  # hosts per leaf, switch cables in bundles
        # the bundle of one scalable unit's leaf-to-spine cables: hover names it, a click zooms into the unit
        pick = page.evaluate(f"""(() => {{ for (let j = 0; j < {bundles}; ++j) {{
            const b = window.ibweb.bundleAt(j); if (b && b.group >= 0 && b.cables >= 8) return {{j, ...b}}; }}
            return null; }})()""")
        assert pick is not None
        page.mouse.move(pick["x"], pick["y"])
        poll(page, "window.ibweb.tooltipText().includes('cables from group')", 10)
        assert f"{pick['cables']} cables from group {pick['group']}" in page.evaluate("window.ibweb.tooltipText()")
        page.mouse.click(pick["x"], pick["y"])
        poll(page, "window.ibweb.zoom > 4 && window.ibweb.bundles === 0 && window.ibweb.drawnLinks > 0", 20)
        drawn = page.evaluate("window.ibweb.drawnLinks")
        assert drawn < 8192, "only the cables on screen are traced"
        first = page.evaluate("window.ibweb.frames")
        poll(page, f"window.ibweb.frames > {first}", 20)  # frames keep coming in while drilled down
        assert page.evaluate("window.ibweb.bundles") == 0
        # the matrix stays readable: 512 leaves by 512 spines shown in bins of two
        m = page.evaluate("window.ibweb.matrix")
        assert m["rows"] <= 256 and m["cols"] <= 256
        assert page.errors == [] and page.console_errors == []
