"""Fabrics created from a generator or an uploaded topology file, in the UI and the API (issue 3)."""

from pathlib import Path

import pytest
from django.contrib.auth.models import User
from django.core.files.uploadedfile import SimpleUploadedFile

from ibweb.fabrics.models import Fabric
from tests.support.tenancy_fixtures import tenants  # noqa: F401

DATA = Path(__file__).resolve().parents[2] / "data"
pytestmark = pytest.mark.django_db


def upload(name: str) -> SimpleUploadedFile:
    return SimpleUploadedFile(name, (DATA / name).read_bytes(), content_type="text/plain")


def test_ui_creates_a_fabric_from_an_ibnetdiscover_file(operator):
    response = operator.post("/fabrics/add/", {"name": "Lab", "slug": "lab", "routing_engine": "minhop", "tick_s": 1,
                                               "source": "upload", "topology_file": upload("ibnd_fat_tree_2l.txt")})
    assert response.status_code == 302 and response.url == "/fabrics/lab/"
    fabric = Fabric.objects.get(slug="lab")
    assert fabric.spec["topology"]["format"] == "ibnetdiscover"
    assert len(fabric.spec["topology"]["fabric"]["nodes"]["name"]) > 0


@pytest.mark.parametrize("name", ["broken_truncated.txt", "broken_duplicate_guid.txt", "broken_unknown_speed.txt",
                                  "broken_port_above_count.txt", "broken_unconfirmed_link.txt"])
def test_ui_shows_the_line_of_a_broken_file_and_saves_nothing(operator, name):
    response = operator.post("/fabrics/add/", {"name": "Bad", "slug": "bad", "routing_engine": "minhop",
                                               "tick_s": 1, "source": "upload", "topology_file": upload(name)})
    assert response.status_code == 200
    errors = response.context["form"].errors["topology_file"]
    assert errors and errors[0].startswith(f"{name}:") and any(ch.isdigit() for ch in errors[0].split(":")[1])
    assert not Fabric.objects.filter(slug="bad").exists()


def test_ui_generator_errors_name_the_field(operator):  # issue 18: typed fields instead of a JSON textarea
    base = {"name": "Gen", "slug": "gen", "routing_engine": "ftree", "tick_s": 1, "source": "generator",
            "generator": "fat_tree"}
    response = operator.post("/fabrics/add/", {**base, "fat_tree__hosts": "100000", "fat_tree__radix": "8"})
    assert response.status_code == 200 and "fat_tree__hosts" in response.context["form"].errors
    response = operator.post("/fabrics/add/", {**base, "fat_tree__hosts": "", "fat_tree__radix": "16"})
    assert response.context["form"].errors["fat_tree__hosts"] == ["GPU hosts is required"]
    response = operator.post("/fabrics/add/", {**base, "fat_tree__hosts": "5000", "fat_tree__radix": "16"})
    assert "exceed the radix" in response.context["form"].errors["generator"][0], "the design's own check"
    response = operator.post("/fabrics/add/", {**base, "fat_tree__hosts": "64", "fat_tree__radix": "16",
                                               "fat_tree__speed": "NDR", "fat_tree__levels": "2",
                                               "dragonfly_plus__groups": "junk"})  # other generators' fields ignored
    assert response.status_code == 302
    assert Fabric.objects.get(slug="gen").spec["topology"] == {"generator": "fat_tree", "hosts": 64, "radix": 16}


def test_add_page_needs_the_permission(client):
    assert client.get("/fabrics/add/").status_code == 302  # to the login page
    user = User.objects.create_user("viewer", password="pw")
    client.force_login(user)
    assert client.get("/fabrics/add/").status_code in (302, 403)


def test_api_upload_and_summary(operator):
    response = operator.post("/api/fabrics/fabrics/", {"name": "API", "slug": "api-lab",
                                                       "topology_file": upload("ibnd_fat_tree_2l.txt")})
    assert response.status_code == 201, response.content
    topology = response.json()["spec"]["topology"]
    assert topology["format"] == "ibnetdiscover" and topology["fabric"]["nodes"] > 0  # summarised, not the whole file
    bad = operator.post("/api/fabrics/fabrics/", {"name": "X", "slug": "x", "topology_file":
                                                  upload("broken_duplicate_guid.txt")})
    assert bad.status_code == 400 and bad.json()["topology_file"][0].startswith("broken_duplicate_guid.txt:")
    assert not Fabric.objects.filter(slug="x").exists()


def test_api_creates_a_fabric_from_an_ibdiagnet_archive(operator):  # issue 22
    archive = DATA / "captures" / "ibdiagnet" / "ibdiagnet2_capture.tar.gz"
    response = operator.post("/api/fabrics/fabrics/", {"name": "Diag", "slug": "diag", "topology_file":
                                                       SimpleUploadedFile(archive.name, archive.read_bytes())})
    assert response.status_code == 201, response.content
    topology = response.json()["spec"]["topology"]
    assert topology["format"] == "ibdiagnet" and topology["fabric"] == {"nodes": 9, "links": 10}
    counters = topology["counters"]  # the run's port counters come along with its fabric
    assert (counters["ports"], counters["with_errors"], counters["file"]) == (20, 3, "ibdiagnet2/ibdiagnet2.db_csv")
    assert sum(counters["errors"].values()) >= 3 and all(n > 0 for n in counters["errors"].values())
    preview = operator.post("/api/fabrics/preview/", {"topology_file": SimpleUploadedFile(archive.name,
                                                                                          archive.read_bytes())})
    assert preview.json()["topology"]["counters"] == counters
    row = operator.get("/api/fabrics/fabrics/diag/").json()
    assert row["spec"]["topology"]["counters"] == counters


def test_api_rejects_an_unknown_routing_engine(operator):
    spec = {"topology": {"generator": "fat_tree", "hosts": 8, "radix": 4}}
    response = operator.post("/api/fabrics/fabrics/", {"name": "R", "slug": "r", "routing_engine": "bogus",
                                                       "spec": spec}, content_type="application/json")
    assert response.status_code == 400 and "routing_engine" in response.json()


def test_gzip_uploads_are_read_like_plain_ones(operator):  # issue 16
    import gzip

    data = gzip.compress((DATA / "ibnd_fat_tree_2l.txt").read_bytes())
    response = operator.post("/api/fabrics/fabrics/", {"name": "GZ", "slug": "gz", "topology_file":
                                                       SimpleUploadedFile("fabric.ibnd.gz", data)})
    assert response.status_code == 201, response.content
    assert response.json()["spec"]["topology"]["format"] == "ibnetdiscover"
    cut = operator.post("/api/fabrics/fabrics/", {"name": "Cut", "slug": "cut", "topology_file":
                                                  SimpleUploadedFile("cut.ibnd.gz", data[:-50])})
    assert cut.status_code == 400
    assert cut.json()["topology_file"][0] == "cut.ibnd.gz: truncated gzip data (the compressed stream ends early)"


def test_ui_creates_the_32768_gpu_rail_optimized_fabric(operator):
    """issue 15: the loaded fabric of the scale benches, from the generator form's typed fields."""
    from fabric_engine.scenario import build_fabric, loaded_rail_spec

    want = loaded_rail_spec(32768)["topology"]
    fields = {f"rail_optimized__{k}": str(v) for k, v in want.items() if k != "generator"}
    response = operator.post("/fabrics/add/", {"name": "Rail 32k", "slug": "rail-32k", "routing_engine": "minhop",
                                               "tick_s": 1, "source": "generator", "generator": "rail_optimized",
                                               **fields})
    assert response.status_code == 302 and response.url == "/fabrics/rail-32k/"
    topology = Fabric.objects.get(slug="rail-32k").spec["topology"]
    fabric = build_fabric(topology)
    assert (fabric.num_hosts, fabric.num_switches, fabric.num_links) == (32768, 2560, 98304)
    assert build_fabric(want).num_links == fabric.num_links


CAPTURES = DATA / "captures" / "ibnetdiscover"


def test_upload_of_a_captured_terminal_log_keeps_its_warnings_for_operators_only(operator, tenants):  # noqa: F811
    from ibweb.access import scenario_spec, view_of
    from tests.support.tenancy_fixtures import user_in

    body = {"name": "Cap", "slug": "cap", "topology_file": SimpleUploadedFile(
        "ufm01.log", (CAPTURES / "captured_putty_crlf.txt").read_bytes())}
    response = operator.post("/api/fabrics/fabrics/", body)
    assert response.status_code == 201, response.content
    topology = response.json()["spec"]["topology"]
    assert [w["line"] for w in topology["warnings"]] == [1, 2, 3, 4, 84, 114]
    assert topology["warnings"][1] == {"line": 2, "text": "[root@ufm01 ~]# ibnetdiscover",
                                       "reason": "shell prompt skipped"}
    spec = Fabric.objects.get(slug="cap").spec
    assert spec["topology"]["fabric"]["as_read"]["loopbacks"] == [["spine01", 10, 11, "4xNDR"]]
    # A tenant's member sees the fabric-wide topology, never the capture's warnings nor what it said of nodes.
    member = view_of(user_in(None, "member", tenants[0]))
    seen = scenario_spec(member, spec)["topology"]
    assert "warnings" not in seen and "as_read" not in seen["fabric"] and seen["format"] == "ibnetdiscover"
    assert "warnings" in scenario_spec(view_of(User.objects.get(username="op")), spec)["topology"]


def test_guid_files_are_the_fabrics_routing_options(operator, tenants):  # noqa: F811  (issue 22)
    from fabric_engine.routing.options import engine_options
    from fabric_engine.scenario import build_emulator
    from ibweb.access import view_of
    from tests.support.tenancy_fixtures import user_in

    capture = (CAPTURES / "ibdiagnet_ndr.ibnetdiscover").read_bytes()
    roots = SimpleUploadedFile("roots.guids", b"# spine\n0xb8cef603000a0001\n")
    cns = SimpleUploadedFile("cns.guids", b"0x0c42a10300000011\n0x0c42a10300000031\n0x0c42a10300000021\n"
                                          b"0x0c42a10300000041\n")
    response = operator.post("/fabrics/add/", {"name": "Pod", "slug": "pod", "routing_engine": "ftree", "tick_s": 1,
                                               "source": "upload", "topology_file": SimpleUploadedFile(
                                                   "pod.txt", capture), "root_guid_file": roots, "cn_guid_file": cns})
    assert response.status_code == 302, response.context["form"].errors
    row = Fabric.objects.get(slug="pod")
    assert row.routing_options == {"roots": ["0xb8cef603000a0001"], "cns": [
        "0x0c42a10300000011", "0x0c42a10300000031", "0x0c42a10300000021", "0x0c42a10300000041"]}
    emulator = build_emulator(row.scenario())  # ftree ranks from the spine: no fallback despite the ANs
    assert emulator.routing.engine == "ftree" and "fallback" not in emulator.routing.info
    assert engine_options("ftree", row.routing_options)["roots"] == [0xB8CEF603000A0001]
    # A root file for an engine that takes none, and a line that is no GUID: the field says so, nothing saved.
    bad = operator.post("/fabrics/add/", {"name": "Bad", "slug": "bad", "routing_engine": "minhop", "tick_s": 1,
                                          "source": "upload", "topology_file": SimpleUploadedFile("pod.txt", capture),
                                          "root_guid_file": SimpleUploadedFile("roots.guids", b"0x10\n")},
                        HTTP_ACCEPT="application/json")
    assert bad.status_code == 400 and "apply to updn and ftree only" in bad.json()["errors"]["root_guid_file"][0]
    worse = operator.post("/fabrics/add/", {"name": "Bad", "slug": "bad", "routing_engine": "ftree", "tick_s": 1,
                                            "source": "upload", "topology_file": SimpleUploadedFile("p.txt", capture),
                                            "cn_guid_file": SimpleUploadedFile("c.guids", b"# x\nspine01\n")},
                          HTTP_ACCEPT="application/json")
    assert worse.status_code == 400 and worse.json()["errors"]["cn_guid_file"][0].startswith("c.guids:2: not a GUID")
    assert not Fabric.objects.filter(slug="bad").exists()
    # The API carries them to operators; a tenant's member never sees every tenant's port GUIDs.
    api = operator.get("/api/fabrics/fabrics/pod/").json()
    assert api["routing_options"] == row.routing_options
    assert operator.patch("/api/fabrics/fabrics/pod/", {"routing_engine": "minhop"},
                          content_type="application/json").status_code == 400
    member = user_in(None, "member", tenants[0])
    assert view_of(member).level.name == "TENANTS"
    operator.force_login(member)
    seen = operator.get("/api/fabrics/fabrics/pod/")
    assert seen.status_code in (200, 404) and "routing_options" not in (seen.json() if seen.status_code == 200 else {})
