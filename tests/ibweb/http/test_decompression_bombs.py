"""Issue 26, item 3: a gzip bomb sent to any route that takes a compressed file is refused as it inflates.

Every upload route that reads gzip (a fabric's topology file: create, PATCH, preview, the add-fabric page; its
OpenSM GUID files; the policy page's partitions.conf file) is sent a 34 MiB text deflated 1,000:1 (valid
comment lines: a reader would parse it if let through), a ``.tar.gz`` of ibdiagnet's folder that does the
same, and a good gzip file. The bombs are a 4xx naming the field, the file and the limit; nothing is stored;
the good file is read. The real server answers ``/healthz`` while bombs arrive
(``tests/bench/bench_hostile_requests.py`` measures how fast).
"""

# ruff: noqa: F811  (the fixtures of superuser_fixtures are redefined as test arguments)
from __future__ import annotations

import gzip
import io
import tarfile
import threading
import urllib.request

import pytest
from django.contrib.messages import get_messages
from django.core.files.uploadedfile import SimpleUploadedFile

from fabric_engine.formats import write
from fabric_engine.topology.generate import fat_tree
from ibweb.fabrics.models import Fabric
from ibweb.http.inflate import MAX_RATIO, inflated
from ibweb.tenancy.models import Partition
from tests.support.hostile_requests import SUPERUSER, csrf_headers, multipart
from tests.support.server import running_server
from tests.support.superuser_fixtures import api, page, root  # noqa: F401 (fixtures)

SPEC = {"topology": {"generator": "fat_tree", "hosts": 8, "radix": 4, "name": "tiny"}}
NEW = {"name": "X", "slug": "x"}
DESIGN = write(fat_tree(hosts=4, radix=4), "ibnetdiscover")
#: 34 MiB of comment lines, deflated about 1,000:1.
BOMB = gzip.compress(b"# a comment line of ibnetdiscover\n" * (1 << 20), 9)
RATIO = f"expands more than {MAX_RATIO}-fold once decompressed"


def _tar_bomb() -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tf:
        info = tarfile.TarInfo("ibdiagnet2/ibdiagnet2.db_csv")
        info.size = 32 << 20
        tf.addfile(info, io.BytesIO(b"\n" * info.size))
    return buf.getvalue()


TAR_BOMB = _tar_bomb()


def bomb(name: str = "bomb.topo.gz", data: bytes = BOMB) -> SimpleUploadedFile:
    return SimpleUploadedFile(name, data)


def test_the_bombs_are_bombs():
    assert len(gzip.decompress(BOMB)) > 300 * len(BOMB) and len(gzip.decompress(TAR_BOMB)) > 300 * len(TAR_BOMB)


def test_inflated_names_the_field_file_and_limit():
    from django.core.exceptions import ValidationError

    with pytest.raises(ValidationError) as exc:
        inflated(BOMB, "b.gz", "topology_file", 64 << 20)
    assert exc.value.message_dict == {"topology_file": [f"b.gz: {RATIO} (a decompression bomb?): refused"]}
    with pytest.raises(ValidationError) as exc:
        inflated(gzip.compress(DESIGN.encode()), "d.gz", "f", 1000)
    assert exc.value.message_dict == {"f": ["d.gz: more than 1,000 bytes once decompressed"]}
    with pytest.raises(ValidationError, match="larger than 1,000 bytes"):
        inflated(DESIGN.encode(), "d", "f", 1000)
    assert inflated(gzip.compress(DESIGN.encode()), "d.gz", "f", 1 << 20) == DESIGN.encode()


@pytest.fixture
def tiny(db) -> Fabric:
    return Fabric.objects.create(name="Tiny", slug="tiny", spec=SPEC)


def _refused(response, field: str) -> None:
    assert response.status_code == 400, (response.status_code, response.content[:400])
    body = response.json()
    messages = (body.get("errors") or body)[field]
    assert any(RATIO in m and ".gz" in m for m in messages), messages


@pytest.mark.django_db
@pytest.mark.parametrize("name, data", [("bomb.topo.gz", BOMB), ("ibdiagnet2.tar.gz", TAR_BOMB)])
def test_topology_uploads(api, page, tiny, name, data):
    _refused(api.post("/api/fabrics/fabrics/", {**NEW, "topology_file": bomb(name, data)}, format="multipart"),
             "topology_file")
    _refused(api.patch("/api/fabrics/fabrics/tiny/", {"topology_file": bomb(name, data)}, format="multipart"),
             "topology_file")
    form = {**NEW, "routing_engine": "minhop", "tick_s": "1", "source": "upload"}
    _refused(page.post("/fabrics/add/", {**form, "topology_file": bomb(name, data)}, HTTP_ACCEPT="application/json"),
             "topology_file")
    preview = api.post("/api/fabrics/preview/", {"topology_file": bomb(name, data)}, format="multipart")
    assert preview.status_code == 200 and preview.json()["valid"] is False
    assert RATIO in preview.json()["errors"]["topology_file"][0]
    assert list(Fabric.objects.values_list("slug", flat=True)) == ["tiny"]
    assert Fabric.objects.get(slug="tiny").spec == SPEC
    good = api.post("/api/fabrics/preview/", {"topology_file": bomb("good.topo.gz", gzip.compress(DESIGN.encode()))},
                    format="multipart")
    assert good.status_code == 200 and good.json()["valid"] is True, good.content[:400]


@pytest.mark.django_db
@pytest.mark.parametrize("field", ["root_guid_file", "cn_guid_file", "io_guid_file"])
def test_guid_files(page, field):
    form = {**NEW, "routing_engine": "ftree", "tick_s": "1", "source": "upload",
            "topology_file": SimpleUploadedFile("good.topo", DESIGN.encode())}
    _refused(page.post("/fabrics/add/", {**form, field: bomb("guids.gz")}, HTTP_ACCEPT="application/json"), field)
    assert not Fabric.objects.exists()


@pytest.mark.django_db
def test_partitions_conf_file(page, tiny):
    answer = page.post("/tenancy/fabrics/tiny/import/", {"file": bomb("partitions.conf.gz")})
    assert answer.status_code == 302
    shown = [str(m) for m in get_messages(answer.wsgi_request)]
    assert any(m.startswith("Nothing imported") and "partitions.conf.gz" in m and RATIO in m for m in shown), shown
    assert not Partition.objects.filter(fabric=tiny).exists()


# ---- the real server: refused there too, and /healthz answers while bombs arrive
def test_bombs_on_a_real_server_while_healthz_answers(tmp_path):
    with running_server(tmp_path, setup=SUPERUSER) as server:
        headers = csrf_headers(server)
        body, kind = multipart({**NEW, "topology_file": ("bomb.topo.gz", BOMB)})
        answers, health = [], []
        done = threading.Event()

        def send_bombs() -> None:
            for _ in range(5):
                req = urllib.request.Request(server.url + "/api/fabrics/fabrics/", data=body, method="POST",
                                             headers={**headers, "Content-Type": kind})
                try:
                    urllib.request.urlopen(req, timeout=60)
                except urllib.error.HTTPError as exc:
                    answers.append((exc.code, exc.read().decode()))
            done.set()

        sender = threading.Thread(target=send_bombs)
        sender.start()
        while not done.is_set():
            with urllib.request.urlopen(server.url + "/healthz", timeout=10) as r:
                health.append(r.status)
        sender.join()
    assert [code for code, _ in answers] == [400] * 5 and all(RATIO in text and "bomb.topo.gz" in text
                                                             for _, text in answers), answers
    assert health and set(health) == {200}
