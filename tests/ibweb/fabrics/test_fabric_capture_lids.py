"""A capture whose 2-port HCAs leave port 2 unconnected, on consecutive host LIDs, uploaded and started.

The reader gives those ports free LIDs, off the ``lid + port - 1`` rule: the stored spec carries them
(``port_lids``), so the engine builds from the spec the fabric the preview showed.
"""

import asyncio
import json
from pathlib import Path

import numpy as np
import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from fabric_engine import formats
from fabric_engine.errors import FormatError
from fabric_engine.formats.json_format import from_json, to_json
from ibweb.fabrics.models import Fabric
from ibweb.live.engine.emulated import EmulatedSource
from ibweb.live.feed.frame_store import topology_base, with_ids

VOLTAIRE = (Path(__file__).resolve().parents[2] / "data" / "captures" / "ibnetdiscover"
            / "voltaire_sdr_ends_differ.ibnetdiscover")
pytestmark = pytest.mark.django_db


def started(row):
    """The engine's emulated source of ``row`` after it started (built from the stored spec), stepped once."""
    source = EmulatedSource(row)

    async def run():
        async def progress(fraction, message):
            return None

        await source.start(progress)
        return await source.step(1, 0.0)

    state = asyncio.run(run())
    assert state.seq == 1
    return source.fabric


@pytest.mark.parametrize("via", ["ui", "api"])
def test_the_engine_builds_an_uploaded_capture_with_its_real_port_lids(operator, via):
    read = formats.read(VOLTAIRE)
    upload = SimpleUploadedFile("voltaire.txt", VOLTAIRE.read_bytes())
    if via == "ui":
        response = operator.post("/fabrics/add/", {"name": "Lab", "slug": "lab", "routing_engine": "minhop",
                                                   "tick_s": 1, "source": "upload", "topology_file": upload})
        assert response.status_code == 302, response.context["form"].errors
    else:
        response = operator.post("/api/fabrics/fabrics/", {"name": "Lab", "slug": "lab", "topology_file": upload})
        assert response.status_code == 201, response.content
    row = Fabric.objects.get(slug="lab")
    stored = row.spec["topology"]["fabric"]
    assert stored["port_lids"] == {"node": [2, 3, 4, 5, 6], "port": [2] * 5, "lid": [1, 2, 4, 5, 7]}
    built = started(row)
    for k in ("lid", "port_lid", "port_guid", "a_node", "a_port", "b_node", "b_port", "width", "speed",
              "trained_down"):
        assert np.array_equal(getattr(built, k), getattr(read, k)), k
    # The feed's topology (names and GUIDs put back per view) carries them too, and reads back the same.
    feed = json.loads(with_ids(topology_base(to_json(built, as_read=())), stored["nodes"]["name"],
                               stored["nodes"]["guid"]))
    assert np.array_equal(from_json(feed).port_lid, read.port_lid) and "port_guids" not in json.dumps(feed)


def test_the_engine_keeps_the_port_guids_of_a_capture(operator):
    """ConnectX-4 and later, and SHARP Aggregation Nodes, give port 1 the node GUID: kept in the operators' as_read."""
    capture = VOLTAIRE.with_name("ibdiagnet_ndr.ibnetdiscover")
    read = formats.read(capture)
    response = operator.post("/api/fabrics/fabrics/", {"name": "Pod", "slug": "pod", "topology_file":
                                                       SimpleUploadedFile("pod.txt", capture.read_bytes())})
    assert response.status_code == 201, response.content
    built = started(Fabric.objects.get(slug="pod"))
    assert np.array_equal(built.port_guid, read.port_guid) and np.array_equal(built.port_lid, read.port_lid)
    assert [built.node(int(g)) for g in read.guid] == list(range(read.num_nodes))


def test_a_spec_stored_before_port_lids_fails_with_the_ports_named(operator):
    """Such a fabric stored by an older ibweb cannot be built; the error says why (upload the file again)."""
    spec = to_json(formats.read(VOLTAIRE))
    del spec["port_lids"]
    row = Fabric(name="Old", slug="old", spec={"topology": {"source": "voltaire.txt", "format": "ibnetdiscover",
                                                            "fabric": spec}})
    with pytest.raises(FormatError, match=r"voltaire\.txt: nodes\.lid\[3\]: LID 12 is held by both port 2 of node01 "
                                          r"and port 1 of node02"):
        started(row)
