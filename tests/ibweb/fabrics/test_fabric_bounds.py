"""Issue 14: fabric uploads and specs beyond what one subnet holds are 400s naming the file and line, or the field."""

import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from ibweb.fabrics.models import Fabric
from tests.support import hostile

pytestmark = pytest.mark.django_db
URL = "/api/fabrics/fabrics/"


def test_ibnetdiscover_upload_with_a_switch_at_lid_100_million_names_its_line(operator):
    """Issue 14: 860 MB before its 400."""
    text = hostile.ibnetdiscover_far_lid()
    line = next(i for i, ln in enumerate(text.splitlines(), 1) if str(hostile.FAR_LID) in ln)
    upload = SimpleUploadedFile("far.topo", text.encode(), content_type="text/plain")
    r = operator.post(URL, {"name": "Far", "slug": "far", "topology_file": upload})
    assert r.status_code == 400
    assert r.json()["topology_file"] == [f"far.topo:{line}: lid 100000000 is above the highest unicast LID 49151 "
                                         f"(0xBFFF)"]
    assert not Fabric.objects.filter(slug="far").exists()


def test_json_fabric_with_10000_ports_on_a_node_is_a_400_naming_the_field(operator):
    """Issue 14: accepted (200) before; the engine then spent 581 MB on every rebuild."""
    upload = SimpleUploadedFile("ports.json", json.dumps(hostile.json_nports()).encode(), "application/json")
    r = operator.post(URL, {"name": "Ports", "slug": "ports", "topology_file": upload})
    assert r.status_code == 400
    assert r.json()["topology_file"] == ["ports.json: nodes.nports[0]: 10000 is outside 1..254 (port numbers are "
                                         "1..254)"]
    spec = {"topology": {"fabric": hostile.json_nports(), "source": "inline.json"}}
    r = operator.post(URL, {"name": "Ports", "slug": "ports", "spec": spec}, content_type="application/json")
    assert r.status_code == 400 and "nodes.nports[0]: 10000 is outside 1..254" in r.json()["spec"][0]
    assert not Fabric.objects.filter(slug="ports").exists()


def test_fat_tree_of_radix_800_is_a_400_naming_the_field(operator):
    """Issue 14: accepted before; 586 MB to route."""
    r = operator.post(URL, {"name": "Wide", "slug": "wide", "spec": {"topology": hostile.fat_tree_radix()}},
                      content_type="application/json")
    assert r.status_code == 400 and r.json()["spec"][0].startswith("topology.radix: 800 is above 254")
    assert not Fabric.objects.filter(slug="wide").exists()


def test_the_32768_gpu_rail_optimized_fabric_is_still_accepted(operator):
    topology = {"generator": "rail_optimized", "nodes": 4096, "gpus_per_node": 8, "nodes_per_su": 32, "radix": 64,
                "levels": 3}
    r = operator.post(URL, {"name": "Big", "slug": "big", "spec": {"topology": topology}},
                      content_type="application/json")
    assert r.status_code == 201, r.content
