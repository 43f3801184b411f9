"""Issue 26, item 1: text from a request is never taken for a path.

Every route that takes a file or text is sent the name of a file on the server (as text, as an uploaded
file's content, as a form field where a file belongs); none may read it. Each answer is a 4xx naming the
field or the line (never a 500), and no answer and no stored row holds a line of the real file. Besides
the system's files, the test writes canaries: files a reader would accept (a topology, a plan, a
``partitions.conf``, an ``iblinkinfo`` output, a GUID file), so a route that read the file named would
answer 201, not only echo a line.
"""

# ruff: noqa: F811  (the fixtures of superuser_fixtures are redefined as test arguments)
from __future__ import annotations

import contextlib
import html
import json
import shutil
from pathlib import Path

import pytest
from django.contrib.messages import get_messages
from django.core import serializers
from django.core.files.uploadedfile import SimpleUploadedFile
from rest_framework.test import APIClient

import ibweb.settings
from fabric_engine.formats import write
from fabric_engine.topology.generate import fat_tree
from ibweb.fabrics.choices import FabricMode
from ibweb.fabrics.models import Fabric
from ibweb.fabrics.uploads import NOT_A_PATH
from ibweb.telemetry.choices import CollectorSource
from ibweb.telemetry.models import CollectorConfig, PushToken, Sweep
from ibweb.tenancy.models import Partition, PartitionMember
from ibweb.twin.choices import JobSourceKind
from ibweb.twin.models import CablingPlan, JobSource, JobToken, ScheduledJob
from tests.support.superuser_fixtures import api, page, root  # noqa: F401 (fixtures)

pytestmark = pytest.mark.django_db

SETTINGS = str(Path(ibweb.settings.__file__).resolve())
#: Server files named as a request might name them.
PATHS = ["/etc/passwd", "/etc/hostname", SETTINGS, "/proc/self/environ", "manage.py", "/etc/passwd\n",
         "file:///etc/passwd", "canaries"]
LINKINFO = Path(__file__).resolve().parents[2] / "data" / "telemetry" / "iblinkinfo.txt"
#: File names that make a reader guess a format from the extension (and one it cannot tell).
NAMES = ["t.ibnd", "t.net", "t.json", "t.topo", "t.txt"]
SPEC = {"topology": {"generator": "fat_tree", "hosts": 8, "radix": 4, "name": "tiny"}}
NEW = {"name": "X", "slug": "x"}
DESIGN = write(fat_tree(hosts=4, radix=4), "ibnetdiscover")
SAMPLE = {"lid": 2, "port": 3, "t": 1.7e9, "extended": True, "counters": {"PortXmitData": 1000}}


def _lines_of(data: bytes, first: bool = False) -> set[str]:
    """The start of each line of a file (so a message that cuts a line short still matches)."""
    lines = [ln.strip() for ln in data.decode("utf-8", "replace").replace("\x00", "\n").splitlines()]
    lines = [ln for ln in lines if ln and not ln.startswith("#")]
    out = {ln[:24] for ln in lines if len(ln) >= 10}
    if first and lines and len(lines[0]) >= 4:
        out.add(lines[0][:24])  # /etc/hostname: one short line
    return out


def _needles() -> set[str]:
    needles = set()
    for name in ("/etc/passwd", "/etc/hostname", SETTINGS, "/proc/self/environ", "manage.py"):
        try:
            needles |= _lines_of(Path(name).read_bytes(), first=True)
        except OSError:
            continue
    return needles


NEEDLES = _needles()


@pytest.fixture(scope="module")
def canaries(tmp_path_factory) -> list[str]:
    """Server files each reader would accept, by absolute path (their lines are needles too)."""
    root = tmp_path_factory.mktemp("canaries")
    files = {
        "design.topo": DESIGN,
        "design.json": write(fat_tree(hosts=4, radix=4), "json"),
        "plan.csv": "node,port,remote node,remote port\ncanary01,1,canary02,1\ncanary01,2,canary03,1\n",
        "partitions.conf": "canary_part=0x0777, ipoib: 0xb83fd20300000011=full, 0xb83fd20300000021=limited;\n",
        "roots.guids": "0x0b83fd2030000abc  canary-root-switch\n",
    }
    for name, text in files.items():
        (root / name).write_text(text)
    shutil.copy(LINKINFO, root / "iblinkinfo.txt")
    paths = sorted(root.iterdir())
    for p in paths:
        NEEDLES.update(n for n in _lines_of(p.read_bytes()) if not n.startswith("node,port"))
    return [str(p) for p in paths]


@pytest.fixture(params=PATHS)
def paths(request, canaries) -> list[str]:
    """What one case sends: a system path, or every canary's path."""
    return canaries if request.param == "canaries" else [request.param]


def _strings(value) -> list[str]:
    if isinstance(value, dict):
        return [s for k, v in value.items() for s in (str(k), *_strings(v))]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return [str(value)]


def leaked(text: str) -> list[str]:
    return sorted(n for n in NEEDLES if n in text)


def assert_no_leak(response) -> None:
    body = response.content.decode("utf-8", "replace")
    texts = [body, html.unescape(body)]
    with contextlib.suppress(ValueError):
        texts += _strings(json.loads(body))
    texts += [str(m) for m in get_messages(response.wsgi_request)] if hasattr(response, "wsgi_request") else []
    found = sorted({n for t in texts for n in leaked(t)})
    assert not found, f"{response.status_code} answer holds server file lines {found}: {body[:400]}"


def assert_nothing_stored() -> None:
    rows = [*Fabric.objects.all(), *CablingPlan.objects.all(), *Partition.objects.all(),
            *PartitionMember.objects.all(), *Sweep.objects.all(), *ScheduledJob.objects.all()]
    dump = serializers.serialize("json", rows)
    assert not leaked(dump), leaked(dump)
    assert not leaked(json.dumps(list(Fabric.objects.values_list("spec", flat=True))))


def refused(response, *fields: str, status: tuple[int, ...] = (400,)) -> dict:
    """A 4xx (``status``) whose answer names one of ``fields`` (a key of the errors) or a line; no leak."""
    assert_no_leak(response)
    assert response.status_code in status, (response.status_code, response.content[:400])
    body = response.json()
    errors = body.get("errors", body) if isinstance(body, dict) else {}
    assert set(fields) & set(errors) or body.get("line"), body
    return body


@pytest.fixture
def fabrics(db) -> tuple[Fabric, Fabric]:
    """An emulated fabric (partitions, plan, PATCH) and a watched one (push collector, push job source)."""
    emulated = Fabric.objects.create(name="Tiny", slug="tiny", spec=SPEC)
    real = Fabric.objects.create(name="Real", slug="real", mode=FabricMode.TELEMETRY)
    return emulated, real


def upload(name: str, content: str) -> SimpleUploadedFile:
    return SimpleUploadedFile(name, content.encode())


def test_fabric_create_upload_and_preview(api, page, fabrics, paths):
    form = {**NEW, "routing_engine": "minhop", "tick_s": "1", "source": "upload"}
    for path in paths:
        for name in NAMES:
            refused(api.post("/api/fabrics/fabrics/", {**NEW, "topology_file": upload(name, path)},
                             format="multipart"), "topology_file")
            refused(page.post("/fabrics/add/", {**form, "topology_file": upload(name, path)},
                              HTTP_ACCEPT="application/json"), "topology_file")
            # a preview answers an invalid file with 200 {"valid": false, "errors": {"topology_file": [...]}}
            preview = api.post("/api/fabrics/preview/", {"topology_file": upload(name, path)}, format="multipart")
            assert_no_leak(preview)
            assert preview.status_code == 200 and preview.json()["valid"] is False, preview.content[:400]
            assert "topology_file" in preview.json()["errors"]
        # the name of a file where the file belongs: never opened
        for fmt in ("multipart", "json"):
            for url in ("/api/fabrics/fabrics/", "/api/fabrics/preview/"):
                named = refused(api.post(url, {**NEW, "topology_file": path}, format=fmt), "topology_file")
                assert named["topology_file"] == [NOT_A_PATH]
        named = refused(page.post("/fabrics/add/", {**form, "topology_file": path}, HTTP_ACCEPT="application/json"),
                        "topology_file")
        assert named["errors"]["topology_file"] == [NOT_A_PATH]
        # a spec whose topology names a file: it is the JSON's text
        refused(api.post("/api/fabrics/fabrics/", {**NEW, "spec": {"topology": {"fabric": path}}}, format="json"),
                "spec")
        # OpenSM guid files of the new fabric
        for field in ("root_guid_file", "cn_guid_file", "io_guid_file"):
            ftree = {**form, "routing_engine": "ftree", "topology_file": upload("good.topo", DESIGN)}
            refused(page.post("/fabrics/add/", {**ftree, field: upload("g", path)}, HTTP_ACCEPT="application/json"),
                    field)
            ftree["topology_file"] = upload("good.topo", DESIGN)
            named = refused(page.post("/fabrics/add/", {**ftree, field: path}, HTTP_ACCEPT="application/json"), field)
            assert named["errors"][field] == [NOT_A_PATH]
        assert not Fabric.objects.filter(slug="x").exists()
        assert_nothing_stored()


def test_fabric_patch_topology_file(api, fabrics, paths):
    tiny, _ = fabrics
    url = "/api/fabrics/fabrics/tiny/"
    for path in paths:
        for name in NAMES:
            refused(api.patch(url, {"topology_file": upload(name, path)}, format="multipart"), "topology_file")
        for fmt in ("multipart", "json"):
            named = refused(api.patch(url, {"topology_file": path}, format=fmt), "topology_file")
            assert named["topology_file"] == [NOT_A_PATH]
        refused(api.patch(url, {"spec": {"topology": {"fabric": path}}}, format="json"), "spec")
        tiny.refresh_from_db()
        assert tiny.spec == SPEC
        assert_nothing_stored()


def test_twin_plan_upload(api, page, fabrics, paths):
    url = "/api/twin/fabrics/tiny/plan/"
    for path in paths:
        for name in ["plan.csv", *NAMES]:
            refused(api.post(url, {"text": path, "filename": name}, format="json"), "text")
            refused(api.post(url, {"file": upload(name, path)}, format="multipart"), "file")
            answer = page.post("/fabrics/tiny/plan/", {"file": upload(name, path)})
            assert_no_leak(answer)
            assert answer.status_code == 400 and name.encode() in answer.content
        refused(api.post(url, {"text": path}, format="json"), "text")
        refused(api.post(url, {"file": path}, format="multipart"), "file")
        # the plan of a new real fabric, on the new-fabric form
        form = {"name": "X", "slug": "x", "routing_engine": "minhop", "tick_s": "1", "source": "telemetry",
                "collector-source": "push", "collector-interval_s": "10", "collector-timeout_s": "10"}
        for name in ["plan.csv", *NAMES]:
            refused(page.post("/fabrics/add/", {**form, "twin-plan_file": upload(name, path)},
                              HTTP_ACCEPT="application/json"), "twin-plan_file")
        named = refused(page.post("/fabrics/add/", {**form, "twin-plan_file": path}, HTTP_ACCEPT="application/json"),
                        "twin-plan_file")
        assert named["errors"]["twin-plan_file"] == [NOT_A_PATH]
        answer = page.post("/fabrics/tiny/plan/", {"file": path})
        assert_no_leak(answer)
        assert answer.status_code == 400
        assert not CablingPlan.objects.exists()
        assert_nothing_stored()


def test_partitions_conf_import(api, page, fabrics, paths):
    url = "/api/tenancy/fabrics/tiny/opensm/partitions.conf"
    for path in paths:
        refused(api.post(url, {"text": path}, format="json"), "text")
        refused(api.post(url, path, content_type="text/plain"), "text")
        # the policy page answers with a message on the page it redirects to (the page's own pattern)
        for data in ({"text": path}, {"file": upload("partitions.conf", path)}, {"text": path, "step": "preview"}):
            answer = page.post("/tenancy/fabrics/tiny/import/", data)
            assert_no_leak(answer)
            assert answer.status_code == 302, answer.status_code
            shown = [str(m) for m in get_messages(answer.wsgi_request)]
            assert any(m.startswith("Nothing ") and "partitions.conf" in m for m in shown), shown
        assert not Partition.objects.exists()
        assert_nothing_stored()


def test_pushes(fabrics, paths):
    _, real = fabrics
    config = CollectorConfig.objects.create(fabric=real, source=CollectorSource.PUSH)
    _, push_key = PushToken.issue(config, "collector")
    source = JobSource.objects.create(fabric=real, kind=JobSourceKind.PUSH)
    _, job_key = JobToken.issue(source, "prolog")
    push, jobs = APIClient(), APIClient()
    push.credentials(HTTP_AUTHORIZATION=f"Bearer {push_key}")
    jobs.credentials(HTTP_AUTHORIZATION=f"Bearer {job_key}")
    for path in paths:
        refused(push.post("/api/telemetry/fabrics/real/samples/", {"samples": [SAMPLE], "iblinkinfo": path},
                          format="json"), "iblinkinfo")
        refused(push.post("/api/telemetry/fabrics/real/samples/", {"samples": path}, format="json"), "samples")
        refused(jobs.post("/api/twin/fabrics/real/jobs/", {"jobs": path}, format="json"), "jobs")
        assert not Sweep.objects.exists() and not ScheduledJob.objects.exists()
        assert_nothing_stored()


def test_the_needles_are_real():
    """The comparison reads the real files: at least /etc/passwd's first line and this project's settings."""
    assert any(n.startswith("root:") for n in NEEDLES)
    assert any("DJANGO" in n or "SECRET_KEY" in n or "INSTALLED_APPS" in n for n in NEEDLES)
