"""A hostile tenant crawls a real server and reads the real feed: nothing of another tenant comes back (issue 14).

A uvicorn server runs the demo fabric and its tenants (acme, globex, initech, and the
storage partition); the fabric is the compute plane of a cluster (issue 25). The
identifiers of each tenant are read from the database and the engine (slug, name,
contacts, partition P_Keys and names, member port GUIDs, their node GUIDs and host
names, job names): :func:`prepare` writes them, with the rows a crawl needs, next to
the database. Then, signed in over HTTP as acme's user, as a viewer of no
tenant, and anonymously (public read on), one test each (:data:`ROLES`, each on a server of its own,
so that pytest-xdist runs them side by side):

* every route of the URL resolver is requested, its parameters filled with real values,
  those of the other tenants included (their slugs, partition P_Keys and rows, hosts and
  GUIDs as path and query parameters), and the links found in the bodies are followed
  (bounded); bodies and headers must name nothing of a tenant the role may not see;
* every route is written to (POST, PUT, PATCH, DELETE with a CSRF token and a body that
  would change something): on the API only 401, 403, 404 (another tenant's row) or 405,
  never a 5xx anywhere, and no table changes;
* the live feed is read over real websockets, v1 JSON and v2 binary, for several ticks
  while an analysis runs (its progress messages included): same check.
"""

from __future__ import annotations

import asyncio
import http.client
import json
import os
import re
import subprocess
import sys
import time
from collections import deque
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import quote, urlencode, urljoin, urlsplit

import pytest
import websockets

from fabric_engine.feed_v2 import decode_frame
from tests.support.server import ROOT, running_server

#: Users the crawl signs in as: acme's user (a member of one tenant) and a viewer of no tenant.
USERS = {"acme-user": "acme", "viewer": None}
PASSWORD = "pw-crawl-0123"
#: The most pages one role fetches by following links (the resolver's URLs come first, all of them).
CRAWL_LIMIT = 300
#: The cluster the demo fabric is put in: its page and API compare the plane's jobs of every tenant.
CLUSTER = "crawl-pod"


def prepare(out: str) -> None:
    """Rows the crawl needs, and every tenant's identifiers, as JSON in ``out`` (run in ``manage.py shell``)."""
    import numpy as np
    from django.contrib import admin
    from django.contrib.auth.models import Group, User
    from django.contrib.contenttypes.models import ContentType
    from django.utils import timezone

    from fabric_engine.scenario import build_emulator
    from ibweb.events.models import Event, EventComment
    from ibweb.fabrics.models import Analysis, Cluster, Fabric
    from ibweb.fabrics.tasks import run_analysis
    from ibweb.tenancy.models import Partition, PartitionMember, Tenant

    fabric = Fabric.objects.get(slug="demo")
    fabric.cluster = Cluster.objects.create(name="Crawl pod", slug=CLUSTER)
    fabric.rail = 1
    fabric.save(update_fields=["cluster", "rail"])
    emulator = build_emulator(fabric.scenario())
    f = emulator.fabric
    author = User.objects.create_superuser("crawl-admin", password=PASSWORD)
    viewer = Group.objects.get(name="viewer")
    for name, tenant in USERS.items():
        user = User.objects.create_user(name, password=PASSWORD, is_staff=True)
        user.groups.add(viewer)
        if tenant:
            Tenant.objects.get(slug=tenant).users.add(user)
    order = np.argsort(f.port_guid)
    secrets: dict[str, list[str]] = {}
    hosts: dict[str, list[dict]] = {}
    now = timezone.now()
    for tenant in Tenant.objects.order_by("slug"):
        tenant.contacts = f"ops@{tenant.slug}-corp.example"
        tenant.description = f"{tenant.name} research group"
        tenant.save()
        words = {tenant.slug, tenant.name, tenant.contacts, f"{tenant.slug}-corp"}
        words |= {j.name for j in emulator.jobs if j.tenant == tenant.slug}
        for p in Partition.objects.filter(tenant=tenant):
            words |= {p.name, f"0x{p.pkey:04x}", f"0x{p.pkey | 0x8000:04x}"}
        guids = np.array([int(g, 16) for g in PartitionMember.objects.filter(partition__tenant=tenant)
                          .values_list("guid", flat=True)], dtype=np.uint64)
        pos = np.searchsorted(f.port_guid[order], guids)
        nodes = sorted({int(f.port_node[order[p]]) for p in pos.tolist()})
        hosts[tenant.slug] = [{"index": n, "name": str(f.node_name[n]), "guid": f"0x{int(f.guid[n]):016x}",
                               "port_guid": f"0x{int(f.port_guid[f.port_offset[n]]):016x}",
                               "link": int(f.out_link(n, 1)), "cable": int(f.out_link(n, 1)) % f.num_links}
                              for n in nodes]
        for g in guids.tolist():
            words |= {f"{g:016x}", str(g)}
        for n in nodes:
            words |= {str(f.node_name[n]), f"{int(f.guid[n]):016x}", str(int(f.guid[n]))}
        secrets[tenant.slug] = sorted(words)
        job = next(j for j in emulator.jobs if j.tenant == tenant.slug)
        first = hosts[tenant.slug][0]
        entry = [first["index"], first["name"], first["guid"]]
        event = Event.objects.create(fabric=fabric, key=f"slow:{job.name}", kind="slow_job", object_type="job",
                                     object_id=job.name, job=job.name, tenant=tenant, message=f"{job.name} runs slow",
                                     hosts=[entry], details={"job": job.name}, first_seen=now, last_seen=now)
        EventComment.objects.create(event=event, username="crawl-admin", text=f"{tenant.contacts} asked")
        Event.objects.create(fabric=fabric, key=f"link_down:{first['name']}", kind="link_down", object_type="node",
                             object_id=first["name"], node=first["name"], hosts=[entry],
                             message=f"{first['name']} port 1 is down", details={"node": first["name"]},
                             first_seen=now, last_seen=now)
    # a what-if of a cable of globex's first host: its result lists every job's id and slowdown
    analysis = Analysis.objects.create(fabric=fabric, kind="whatif_links", requested_by=author,
                                       params={"failed_cables": [hosts["globex"][0]["cable"]],
                                               "ebb_patterns": 0, "seed": 1})
    run_analysis(analysis.pk)
    objects = {}
    for model in admin.site._registry:
        pks = list(model._default_manager.order_by("pk").values_list("pk", flat=True)[:6])
        objects[f"{model._meta.app_label}/{model._meta.model_name}"] = [str(pk) for pk in pks]
    data = {
        "secrets": secrets, "hosts": hosts, "admin_objects": objects,
        "tenants": list(Tenant.objects.values_list("slug", flat=True)),
        "jobs": {slug: [j.name for j in emulator.jobs if j.tenant == slug] for slug in secrets},
        "pkeys": [f"0x{p:04x}" for p in Partition.objects.values_list("pkey", flat=True)],
        "partitions": list(Partition.objects.values_list("pk", flat=True)),
        "events": list(Event.objects.values_list("pk", flat=True)),
        "analyses": list(Analysis.objects.values_list("pk", flat=True)),
        "content_types": [ContentType.objects.get_for_model(m).pk for m in (Partition, Tenant, Event)],
        "users": list(User.objects.values_list("pk", flat=True)),
    }
    Path(out).write_text(json.dumps(data))


# ------------------------------------------------------------------ HTTP
class Session:
    """One client of the server: its cookies (session, CSRF), requests without following redirects."""

    def __init__(self, port: int) -> None:
        self.port, self.cookies = port, {}

    def request(self, method: str, url: str, body: bytes | None = None,
                headers: dict | None = None) -> tuple[int, dict, bytes]:
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=120)
        h = {"Host": f"127.0.0.1:{self.port}", **(headers or {})}
        if self.cookies:
            h["Cookie"] = "; ".join(f"{k}={v}" for k, v in self.cookies.items())
        if method != "GET" and "csrftoken" in self.cookies:
            h.update({"X-CSRFToken": self.cookies["csrftoken"], "Referer": f"http://127.0.0.1:{self.port}/"})
        try:
            conn.request(method, url, body=body, headers=h)
            r = conn.getresponse()
            data = r.read()
            for k, v in r.getheaders():
                if k.lower() == "set-cookie":
                    name, _, value = v.split(";")[0].partition("=")
                    self.cookies[name.strip()] = value.strip()
            return r.status, dict(r.getheaders()), data
        finally:
            conn.close()

    def login(self, username: str) -> None:
        status, _, body = self.request("GET", "/accounts/login/")
        token = re.search(rb'name="csrfmiddlewaretoken" value="([^"]+)"', body).group(1).decode()
        form = urlencode({"username": username, "password": PASSWORD, "csrfmiddlewaretoken": token}).encode()
        status, headers, _ = self.request("POST", "/accounts/login/", form,
                                          {"Content-Type": "application/x-www-form-urlencoded"})
        assert status == 302 and "sessionid" in self.cookies, f"{username} could not sign in: {status}"


class Links(HTMLParser):
    """The ``href``, ``src`` and ``action`` values of an HTML page."""

    def __init__(self) -> None:
        super().__init__()
        self.found: list[str] = []

    def handle_starttag(self, tag, attrs) -> None:
        self.found += [v for k, v in attrs if k in ("href", "src", "action", "data-url") and v]


def links_in(text: str, content_type: str, base: str, port: int) -> list[str]:
    """Same-site paths named by a body (HTML attributes, JSON strings), without fragments."""
    found: list[str] = []
    if "html" in content_type:
        parser = Links()
        parser.feed(text)
        found = [urljoin(base, u) for u in parser.found]
    elif "json" in content_type:
        found = re.findall(rf'"((?:http://127\.0\.0\.1:{port})?/[^"\s]*)"', text)
    out = []
    for u in found:
        parts = urlsplit(u)
        if parts.netloc not in ("", f"127.0.0.1:{port}") or parts.scheme not in ("", "http"):
            continue
        path = parts.path + (f"?{parts.query}" if parts.query else "")
        if path.startswith("/") and not path.startswith(("/static/", "//")) and "logout" not in path:
            out.append(path)
    return out


# ------------------------------------------------------------------ URLs from the resolver
_PARAM = re.compile(r"<(?:(\w+):)?(\w+)>|\(\?P<(\w+)>[^)]*\)")


def resolver_routes() -> list[str]:
    from django.urls import get_resolver

    from tests.ibweb.access.test_routes_by_role import walk

    return sorted(set(walk(get_resolver().url_patterns)))


def fill(route: str, data: dict, cap: int = 0) -> list[str]:
    """Concrete URLs of ``route``: each parameter filled with every value of its kind (other tenants' first).

    ``cap``: at most this many values per parameter (0: all).
    """
    route = route.replace("^", "").replace("$", "").replace(r"\.", ".").replace("/?", "")
    if "(?P<url>" in route:
        return ["/admin/no-such-page/"]
    others = [h for slug in data["tenants"] for h in data["hosts"][slug][:2]]
    admin_model = re.match(r"admin/(\w+)/(\w+)/", route)
    values = {
        "slug": ["demo", CLUSTER, *data["tenants"]], "fabric": ["demo"], "pkey": data["pkeys"],
        "filename": ["partitions.conf", "qos-policy.conf", "opensm.conf"],
        "pk": list(dict.fromkeys([*data["partitions"][:6], *data["events"][:8], *data["analyses"], 1, 2, 3])),
        "link": sorted({h["link"] for h in others}), "port": [1],
        "node": [v for h in others for v in (h["name"], h["guid"], h["port_guid"], f"host-{h['index']}")],
        "uidb64": ["MQ"], "token": ["set-password"], "format": ["json"],
        "app_label": ["auth", "accounts", "fabrics", "tenancy", "telemetry", "twin", "events"],
        "content_type_id": [str(c) for c in data["content_types"]],
        "object_id": data["admin_objects"].get("/".join(admin_model.groups()), ["1"]) if admin_model else ["1"],
        "id": [str(u) for u in data["users"][:3]],
        "job": [j for slug in data["tenants"] for j in data["jobs"].get(slug, [])],
    }
    values["object_id"] = values["object_id"] if "content_type_id" not in route else data["partitions"][:4]
    urls = [""]
    pos = 0
    for m in _PARAM.finditer(route):
        name = m.group(2) or m.group(3)
        choices = [".json"] if m.group(1) == "drf_format_suffix" else values.get(name)
        assert choices is not None, f"no values for <{name}> of {route}: add them to fill()"
        choices = choices[:cap] if cap else choices
        urls = [u + route[pos:m.start()] + quote(str(v), safe="") for u in urls for v in choices]
        pos = m.end()
    return ["/" + u + route[pos:] for u in urls]


def query_variants(data: dict) -> list[str]:
    """Other tenants' hosts, GUIDs, jobs and rows as query parameters of the routes that take some."""
    own = data["hosts"]["acme"][0]
    out = []
    for slug in data["tenants"]:
        for h in data["hosts"][slug][:2]:
            for key in ("name", "guid", "port_guid", "index"):
                out.append(f"/api/fabrics/fabrics/demo/path/?{urlencode({'src': h[key], 'dst': own['name']})}")
                out.append(f"/api/fabrics/fabrics/demo/path/?{urlencode({'src': own['name'], 'dst': h[key]})}")
            out += [f"/api/tenancy/members/?{urlencode({'guid': h['port_guid']})}",
                    f"/api/fabrics/fabrics/demo/events/?{urlencode({'node': h['name']})}",
                    f"/fabrics/demo/events/?{urlencode({'q': h['name']})}",
                    f"/admin/tenancy/partition/?{urlencode({'q': h['port_guid']})}",
                    f"/api/fabrics/fabrics/demo/ports/{h['index']}/1/history/"]
        out += [f"/api/tenancy/members/?partition={p}" for p in data["partitions"]]
        out += [f"/api/tenancy/partitions/?{urlencode({'tenant': slug})}",
                f"/api/fabrics/fabrics/demo/events/?{urlencode({'tenant': slug})}",
                f"/api/fabrics/fabrics/demo/jobs/?{urlencode({'tenant': slug})}",
                f"/api/tenancy/audit-entries/?{urlencode({'search': slug})}",
                f"/admin/tenancy/tenant/?{urlencode({'q': slug})}"]
    return out


_RUN = re.compile(r"[a-z0-9]+")


def patterns(words) -> list[tuple[re.Pattern, frozenset[str]]]:
    """Each word as a whole-word, case-blind pattern, with its alphanumeric runs (a quick test first)."""
    return [(re.compile(rf"(?<![A-Za-z0-9]){re.escape(w)}(?![A-Za-z0-9])", re.IGNORECASE),
             frozenset(_RUN.findall(w.lower()))) for w in words]


def forbidden(data: dict) -> dict[str, list]:
    """Per role, the identifiers it may not see: every tenant's but acme's for acme's user, all for the others."""
    mine = set(data["secrets"]["acme"])
    others = {w for slug in data["tenants"] if slug != "acme" for w in data["secrets"][slug]}
    every = others | mine
    return {"acme-user": patterns(sorted(others - mine)), "viewer": patterns(sorted(every)),
            "anonymous": patterns(sorted(every))}


def found_in(text: str, url: str, pats) -> list[str]:
    """The identifiers in ``text``, but those the request itself sent (an echo is not a leak).

    A word is searched for only where every alphanumeric run of it is one of the text's (thousands of
    words, bodies of megabytes).
    """
    runs = set(_RUN.findall(text.lower()))
    return sorted({m.group(0) for p, need in pats if need <= runs and not p.search(url)
                   for m in [p.search(text)] if m})


def crawl(session: Session, role: str, seeds: list[str], pats: list, port: int) -> tuple[int, list[str]]:
    """GET every seed, then the links found (up to :data:`CRAWL_LIMIT` more); returns (requests, failures)."""
    failures, seen = [], set(seeds)
    queue, followed, n = deque(seeds), 0, 0
    while queue:
        url = queue.popleft()
        started = time.monotonic()
        try:
            status, headers, body = session.request("GET", url)
        except TimeoutError:
            failures.append(f"GET {url} as {role}: no answer in 120 s")
            continue
        finally:
            n += 1
            if time.monotonic() - started > 5:
                print(f"slow: GET {url} as {role}: {time.monotonic() - started:.1f} s", flush=True)
        text = body.decode(errors="replace")
        if status >= 500:
            failures.append(f"GET {url} as {role}: {status}")
        if url.startswith("/api/schema/"):
            continue  # the OpenAPI schema: the same static document for everyone (its examples use any word)
        shown = found_in(text + "\n" + json.dumps(headers), url, pats)
        if shown:
            failures.append(f"GET {url} as {role} ({status}) shows {shown}")
        for link in links_in(text, headers.get("content-type", ""), url, port):
            if link not in seen and followed < CRAWL_LIMIT:
                seen.add(link)
                queue.append(link)
                followed += 1
    return n, failures


# ------------------------------------------------------------------ the feed
async def read_feed(server, cookie: str | None, query: str, frames: int, pats, role: str,
                    subscribed: asyncio.Event | None = None) -> tuple[int, list[str]]:
    """The snapshot, ``frames`` frames and the progress messages meanwhile: the identifiers they show.

    ``subscribed`` is set at the first message (the server joins a socket to its groups before it sends one)."""
    headers = {"Cookie": cookie} if cookie else {}
    failures, kinds, tasks, count = [], set(), set(), 0
    async with websockets.connect(f"{server.ws_url}/ws/fabrics/demo/live/{query}", max_size=None,
                                  origin=server.url, additional_headers=headers) as ws:
        seen_frames = 0
        while seen_frames < frames or "analysis" not in tasks:
            msg = await asyncio.wait_for(ws.recv(), 60)
            count += 1
            if subscribed is not None:
                subscribed.set()
            if isinstance(msg, bytes):
                header, _ = decode_frame(msg)
                text, kind = json.dumps(header), "frame-v2"
            else:
                text, kind = msg, json.loads(msg)["type"]
                if kind == "progress":
                    tasks.add(json.loads(msg).get("task"))
            kinds.add(kind)
            seen_frames += kind.startswith("frame")
            shown = found_in(text, "", pats)
            if shown:
                failures.append(f"feed{query} as {role}: a {kind} shows {shown}")
            if seen_frames >= frames + 20:
                failures.append(f"feed{query} as {role}: no analysis progress in {seen_frames} frames")
                break
    want = {"snapshot", "frame-v2" if query else "frame"}
    if not want <= kinds:
        failures.append(f"feed{query} as {role}: got {sorted(kinds)}, expected {sorted(want)}")
    return count, failures


def manage(tmp_path: Path, *args: str) -> str:
    env = {**os.environ, "IBWEB_VAR_DIR": str(tmp_path),
           "DATABASE_URL": f"sqlite:///{tmp_path / 'server.sqlite3'}"}
    return subprocess.run([sys.executable, "manage.py", *args], cwd=ROOT, env=env, check=True, capture_output=True,
                          text=True).stdout


#: Tables a write by a role that may write nothing must leave as they were (the engine writes others).
_FINGERPRINT = """
import hashlib
from django.apps import apps
for m in sorted(apps.get_models(), key=lambda m: m._meta.label_lower):
    if m._meta.app_label in ("tenancy", "fabrics", "twin", "telemetry", "accounts") or \
            m._meta.label_lower in ("auth.group", "events.eventcomment"):
        rows = list(m._default_manager.order_by("pk").values_list())
        print(m._meta.label_lower, hashlib.sha256(repr(rows).encode()).hexdigest())
"""
#: What each write sends: fields that would change something wherever they are accepted.
WRITE_BODY = json.dumps({"guids": ["0x0002c90300000001"], "membership": "full", "name": "pwned", "slug": "pwned",
                         "pkey": "0x0777", "tenant": "globex", "fabric": "demo", "contacts": "pwned@example.com",
                         "kind": "whatif_links", "params": {"failed_cables": [0], "ebb_patterns": 0},
                         "text": "pwned", "comment": "pwned", "members": "0x0002c90300000001 full"}).encode()


#: The roles that crawl, one test each (pytest-xdist runs them side by side, each on a server of its own): acme's
#: user, a viewer of no tenant, and anonymous visitors.
ROLES = ("acme-user", "viewer", "anonymous")


def test_the_crawl_runs_as_every_role_once():
    assert sorted(ROLES) == sorted(["anonymous", *USERS]) and len(set(ROLES)) == len(ROLES)


@pytest.mark.timeout(1800)
@pytest.mark.parametrize("role", ROLES)
def test_a_hostile_tenant_finds_nothing_of_the_others(tmp_path, role):
    out = tmp_path / "crawl.json"
    setup = f"from tests.ibweb.access.test_isolation_crawl import prepare; prepare({str(out)!r})"
    with running_server(tmp_path, setup=setup, name="crawl") as server:
        data = json.loads(out.read_text())
        every = forbidden(data)
        pats = every[role]
        session = Session(server.port)
        if role in USERS:
            session.login(role)
        else:
            session.request("GET", "/accounts/login/")  # its CSRF cookie: writes get past the CSRF check
        admin = Session(server.port)
        admin.login("crawl-admin")
        # the search can fail: what an operator (every tenant) reads names the other tenants
        operator = Session(server.port)
        operator.cookies["sessionid"] = server.session_key
        for url in ("/api/tenancy/tenants/", "/api/fabrics/fabrics/demo/jobs/", "/metrics",
                    f"/api/clusters/{CLUSTER}/"):
            shown = found_in(operator.request("GET", url)[2].decode(), "", every["acme-user"])
            assert {"globex", "initech"} <= {w.lower() for w in shown} or url != "/api/tenancy/tenants/", shown
            assert shown, f"the operator's {url} names no other tenant: the search finds nothing"
        routes = resolver_routes()
        urls = sorted({u for r in routes for u in fill(r, data)}) + query_variants(data)
        failures, counts = [], {}

        # the live feed, v1 and v2, while an analysis runs (its progress reaches every socket)
        async def feeds():
            cookie = "sessionid=" + session.cookies["sessionid"] if role in USERS else None
            subscribed = [asyncio.Event(), asyncio.Event()]
            tasks = [asyncio.ensure_future(read_feed(server, cookie, q, 4, pats, role, ready))
                     for q, ready in zip(("", "?v=2"), subscribed, strict=True)]
            # the analysis starts once every socket gets what the fabric's groups are sent (or a reader ended)
            deadline = time.monotonic() + 60
            while not all(e.is_set() for e in subscribed) and not any(t.done() for t in tasks):
                assert time.monotonic() < deadline, "no feed message in 60 s"
                await asyncio.sleep(0.05)
            status, _, body = await asyncio.to_thread(
                admin.request, "POST", "/api/fabrics/fabrics/demo/analyses/",
                json.dumps({"kind": "whatif_links", "params": {"failed_cables": [data["hosts"]["initech"][0]["cable"]],
                                                               "ebb_patterns": 0}}).encode(),
                {"Content-Type": "application/json"})
            assert status in (201, 202), body
            done = await asyncio.gather(*tasks)
            url = f"/api/fabrics/fabrics/demo/analyses/{json.loads(body)['id']}/"
            for _ in range(300):  # finished before the writes: its row must not change under them
                if json.loads((await asyncio.to_thread(admin.request, "GET", url))[2])["status"] in ("done", "failed"):
                    break
                await asyncio.sleep(1)
            return done

        for count, found in asyncio.run(feeds()):
            counts["feed messages"] = counts.get("feed messages", 0) + count
            failures += found

        # every route and the links in what it answers, GET
        counts[f"GET as {role}"], found = crawl(session, role, urls, pats, server.port)
        failures += found

        # writes: none succeeds, none is a 500, and nothing changes
        before = manage(tmp_path, "shell", "-c", _FINGERPRINT)
        writes = sorted({u for r in routes for u in fill(r, data, cap=4) if "logout" not in u})
        api_writes: dict[int, int] = {}
        for url in writes:
            for method in ("POST", "PUT", "PATCH", "DELETE"):
                status, headers, body = session.request(method, url, WRITE_BODY, {"Content-Type": "application/json"})
                counts[f"writes as {role}"] = counts.get(f"writes as {role}", 0) + 1
                if url.startswith("/api/"):
                    api_writes[status] = api_writes.get(status, 0) + 1
                if status >= 500 or (url.startswith("/api/") and status not in (401, 403, 404, 405)):
                    failures.append(f"{method} {url} as {role}: {status} {body[:200]!r}")
                shown = found_in(body.decode(errors="replace"), url, pats)
                if shown:
                    failures.append(f"{method} {url} as {role} ({status}) shows {shown}")
        after = manage(tmp_path, "shell", "-c", _FINGERPRINT)
        failures += [f"{line.split()[0]} changed by a role that may write nothing"
                     for line in set(after.splitlines()) - set(before.splitlines())]
    print(f"routes: {len(routes)}, URLs: {len(urls)}, " + ", ".join(f"{k}: {v}" for k, v in counts.items())
          + f"; API writes by status: {dict(sorted(api_writes.items()))}")
    assert not failures, "\n".join(failures[:200]) + f"\n({len(failures)} failures)"
    assert len(routes) > 150 and all(v > 0 for v in counts.values())
