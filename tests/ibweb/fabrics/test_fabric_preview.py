"""The new-fabric page's API: generator schema, preview before creating, routing time model (issue 18)."""

from pathlib import Path

import pytest
from django.contrib.auth.models import Permission, User
from django.core.files.uploadedfile import SimpleUploadedFile

from fabric_engine.topology.limits import GENERATOR_PARAMETERS
from ibweb.fabrics import routing_estimate
from ibweb.fabrics.models import Fabric

DATA = Path(__file__).resolve().parents[2] / "data"
pytestmark = pytest.mark.django_db


@pytest.fixture
def operator(client):
    user = User.objects.create_user("op", password="pw")
    user.user_permissions.add(Permission.objects.get(codename="add_fabric"))
    client.force_login(user)
    return client


def preview(client, **body):
    return client.post("/api/fabrics/preview/", body, content_type="application/json")


def test_generator_schema_gives_types_defaults_and_the_bounds_ranges(operator):
    body = operator.get("/api/fabrics/generators/").json()
    fat = {p["name"]: p for p in body["generators"]["fat_tree"]["params"]}
    assert fat["hosts"]["required"] and fat["hosts"]["default"] == 512
    assert fat["radix"] == {**fat["radix"], "kind": "int", "default": 64, "min": 2, "max": 254}
    assert fat["radix"]["why"] == GENERATOR_PARAMETERS["fat_tree"]["radix"].why, "one source for the ranges"
    assert fat["speed"]["choices"][-2:] == ["NDR", "XDR"] and "lids" not in fat and "name" not in fat
    assert set(body["generators"]) == {"fat_tree", "rail_optimized", "dragonfly_plus"}
    assert "minhop" in body["routing_engines"]


def test_preview_describes_the_fabric_before_it_exists(operator):
    answer = preview(operator, generator="fat_tree", params={"hosts": 512, "radix": 64, "storage_servers": 8},
                     routing_engine="minhop")
    assert answer.status_code == 200
    p = answer.json()
    assert p["valid"] and (p["hosts"], p["switches"], p["cables"]) == (520, 49, 1072)
    assert p["switch_tiers"] == {"leaf": 17, "spine": 32} and p["host_roles"] == {"gpu": 512, "storage": 8}
    assert p["lids"] == 49 + 512 + 16 and p["lids_max"] == 49151
    assert p["bisection_gbps"] == 520 // 2 * 400.0
    assert p["topology"] == {"generator": "fat_tree", "hosts": 512, "radix": 64, "storage_servers": 8}
    est = p["routing"]["estimate"]
    assert p["routing"]["engine"] == "minhop" and 0 < est["low"] <= est["seconds"] <= est["high"]
    assert not Fabric.objects.filter(spec__topology__hosts=512).exists()


def test_preview_names_the_parameter_or_the_design_problem(operator):
    bad = preview(operator, generator="fat_tree", params={"hosts": 512, "radix": 800}).json()
    assert not bad["valid"] and "above 254" in bad["errors"]["params"]["radix"][0]
    design = preview(operator, generator="fat_tree", params={"hosts": 5000, "radix": 16}).json()
    assert not design["valid"] and "exceed the radix 16" in design["errors"]["topology"][0]
    unknown = preview(operator, generator="fat_tree", params={"hosts": 8, "bogus": 1}).json()
    assert "not a parameter of fat_tree" in unknown["errors"]["params"]["bogus"][0]
    assert preview(operator, generator="torus", params={}).status_code == 400
    assert preview(operator, routing_engine="bogus").status_code == 400


def test_preview_of_an_upload_names_the_file_and_line(operator):
    ok = operator.post("/api/fabrics/preview/", {"topology_file": SimpleUploadedFile(
        "lab.txt", (DATA / "ibnd_fat_tree_2l.txt").read_bytes()), "routing_engine": "updn"}).json()
    assert ok["valid"] and ok["hosts"] > 0 and ok["topology"] == {"source": "lab.txt", "format": "ibnetdiscover"}
    bad = operator.post("/api/fabrics/preview/", {"topology_file": SimpleUploadedFile(
        "broken_truncated.txt", (DATA / "broken_truncated.txt").read_bytes())}).json()
    assert not bad["valid"] and bad["errors"]["topology_file"][0].startswith("broken_truncated.txt:")
    assert isinstance(bad["errors"]["line"], int) and bad["errors"]["line"] > 0


def test_preview_of_a_capture_lists_warnings_and_what_it_held(operator):  # issue 22
    captures = DATA / "captures" / "ibnetdiscover"
    answer = operator.post("/api/fabrics/preview/", {"topology_file": SimpleUploadedFile(
        "ports.txt", (captures / "ports_p.txt").read_bytes()), "routing_engine": "minhop"}).json()
    assert answer["valid"] and answer["topology"]["format"] == "ibnetdiscover-ports"
    assert (answer["hosts"], answer["switches"], answer["cables"]) == (7, 3, 13)
    assert answer["sharp"] == {"aggregation_nodes": 3, "switches": 3}
    assert answer["loopbacks"] == [["spine01", 10, 11, "4xNDR"]]
    assert [w["line"] for w in answer["warnings"]] == [1, 29, 54, 58]
    director = operator.post("/api/fabrics/preview/", {"topology_file": SimpleUploadedFile(
        "cs7500.txt", (captures / "director_cs7500.ibnetdiscover").read_bytes())}).json()
    assert [len(c["switches"]) for c in director["chassis"]] == [3] and director["warnings"] == []
    ibdiag = operator.post("/api/fabrics/preview/", {"topology_file": SimpleUploadedFile(
        "ufm-sysdump_ibdiagnet.zip", (DATA / "captures" / "ibdiagnet" / "ibdiagnet2_capture.zip").read_bytes())}).json()
    assert ibdiag["valid"] and ibdiag["topology"]["format"] == "ibdiagnet"
    assert (ibdiag["hosts"], ibdiag["switches"], ibdiag["sharp"]["aggregation_nodes"]) == (4, 4, 1)


def test_preview_needs_the_permission_to_add_fabrics(client):
    assert preview(client, generator="fat_tree", params={"hosts": 8}).status_code in (401, 403)
    client.force_login(User.objects.create_user("viewer", password="pw"))
    assert preview(client, generator="fat_tree", params={"hosts": 8}).status_code == 403


def test_page_creates_an_upload_with_json_answers(operator):
    good = operator.post("/fabrics/add/", {"name": "Lab", "slug": "lab", "routing_engine": "minhop", "tick_s": 1,
                                           "source": "upload", "topology_file": SimpleUploadedFile(
                                               "lab.txt", (DATA / "ibnd_fat_tree_2l.txt").read_bytes())},
                         HTTP_ACCEPT="application/json")
    assert good.status_code == 201 and good.json() == {"slug": "lab", "url": "/fabrics/lab/"}
    bad = operator.post("/fabrics/add/", {"name": "Bad", "slug": "lab", "routing_engine": "minhop", "tick_s": 1,
                                          "source": "upload", "topology_file": SimpleUploadedFile(
                                              "broken_truncated.txt", (DATA / "broken_truncated.txt").read_bytes())},
                        HTTP_ACCEPT="application/json")
    body = bad.json()
    assert bad.status_code == 400 and body["line"] == 11
    assert body["errors"]["topology_file"][0].startswith("broken_truncated.txt:11:")
    again = operator.post("/fabrics/add/", {"name": "Lab", "slug": "lab", "routing_engine": "minhop", "tick_s": 1,
                                            "source": "upload", "topology_file": SimpleUploadedFile(
                                                "lab.txt", (DATA / "ibnd_fat_tree_2l.txt").read_bytes())},
                          HTTP_ACCEPT="application/json")
    assert again.status_code == 400 and "slug" in again.json()["errors"] and again.json()["line"] is None


def test_page_shows_typed_fields_with_defaults_and_help(operator):
    page = operator.get("/fabrics/add/").content.decode()
    assert 'name="fat_tree__radix"' in page and 'max="254"' in page and 'value="64"' in page
    assert "Valid: 2 to 254." in page and 'id="generator-schema"' in page
    assert 'name="generator_params"' not in page


def test_routing_model_fit_recovers_a_power_law():
    work = [1e4, 1e5, 1e6, 1e7]
    seconds = [2e-9 * w ** 1.2 for w in work]
    c = routing_estimate.fit(work, seconds)
    assert c["p"] == pytest.approx(1.2) and c["b"] == pytest.approx(2e-9) and c["spread"] == pytest.approx(1.0)
    model = {"engines": {"minhop": {**c, "spread": 2.0}}, "machine": "m"}
    e = routing_estimate.estimate("minhop", 100, 1000, model)
    assert e["seconds"] == pytest.approx(2e-9 * 1e5 ** 1.2) and e["high"] == pytest.approx(4 * e["low"])
    assert routing_estimate.estimate("dfsssp", 100, 1000, model) is None


def test_the_shipped_model_covers_every_engine():
    from fabric_engine.routing import ENGINES

    model = routing_estimate.load_model()
    assert set(model["engines"]) == set(ENGINES) and model["machine"] and model["runs"]
    for engine, runs in model["runs"].items():
        c = model["engines"][engine]
        for r in runs:  # the fit reproduces its own measured runs within its spread (short runs aside)
            if r["seconds"] >= routing_estimate.MIN_SECONDS:
                ratio = c["b"] * (r["switches"] * r["nodes"]) ** c["p"] / r["seconds"]
                assert 1 / c["spread"] - 1e-9 <= ratio <= c["spread"] + 1e-9, (engine, r)


def test_calibrate_measures_and_fits(monkeypatch):
    seen = []
    model = routing_estimate.calibrate(["minhop"], ladder=((64, 16, 2), (128, 16, 2)),
                                       progress=lambda e, h, s: seen.append((e, h)))
    assert seen == [("minhop", 64), ("minhop", 128)] and len(model["runs"]["minhop"]) == 2
    assert model["engines"]["minhop"]["b"] > 0


def test_preview_and_upload_of_a_capture_whose_ends_differ_show_the_trained_down_links(operator):  # issue 34
    """The lower rate read, a warning naming both lines, and the flag in the stored topology the map draws from."""
    voltaire = (DATA / "captures" / "ibnetdiscover" / "voltaire_sdr_ends_differ.ibnetdiscover").read_bytes()
    answer = operator.post("/api/fabrics/preview/", {"topology_file": SimpleUploadedFile(
        "voltaire.txt", voltaire), "routing_engine": "minhop"}).json()
    assert answer["valid"] and answer["trained_down"] == 2 and answer["cables_by_rate"]["1xSDR"]["links"] == 1
    assert [(w["line"], "line 23" in w["reason"] or "line 61" in w["reason"]) for w in answer["warnings"]] == [
        (15, True), (26, True)]
    tabless = operator.post("/api/fabrics/preview/", {"topology_file": SimpleUploadedFile(
        "sat11.log", (DATA / "captures" / "ibnetdiscover" / "tabless_logger_hdr.txt").read_bytes())}).json()
    assert tabless["valid"] and tabless["hosts"] == 4 and "tabs missing" in tabless["warnings"][1]["reason"]
    # What an upload stores as the fabric's topology (and the engine's snapshot carries): the per-link flags.
    from ibweb.fabrics.uploads import topology_from_upload

    stored = topology_from_upload(SimpleUploadedFile("voltaire.txt", voltaire))
    links = stored["fabric"]["links"]
    assert links["trained_down"].count(True) == 2 and len(links["trained_down"]) == 7
    assert [w["line"] for w in stored["warnings"]] == [15, 26]
