"""Freed memory kept in the process: repeated routing runs reuse it instead of faulting pages in again."""

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

_ROUTE_AND_COUNT = """
import json, resource, sys
from fabric_engine.allocator import keep_freed_memory
from fabric_engine.routing import route
from fabric_engine.topology.generate import fat_tree

kept = keep_freed_memory() if sys.argv[1] == "keep" else None
if sys.argv[1] == "django":  # a Django process of ibweb (web, engine, worker) keeps it from the start
    import django, os
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "ibweb.settings")
    django.setup()
f = fat_tree(hosts=1024, radix=16, levels=3)
for _ in range(2):  # warm: the heap grows to what one run needs
    route(f, "minhop")
before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
for _ in range(5):
    route(f, "minhop")
print(json.dumps({"kept": kept, "faults": (resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before) / 5}))
"""


def _run(mode: str, **env: str) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MALLOC_")} | env
    out = subprocess.run([sys.executable, "-c", _ROUTE_AND_COUNT, mode], cwd=ROOT, env=env, check=True,
                         capture_output=True, text=True, timeout=120).stdout
    return json.loads(out.splitlines()[-1])


def test_routing_again_faults_no_page_in_once_freed_memory_is_kept():
    default, kept = _run("default"), _run("keep")
    assert default["faults"] > 500, default  # glibc gives the freed temporaries back, and faults them in again
    assert kept["kept"] is True and kept["faults"] < 50, kept


def test_every_django_process_of_ibweb_keeps_freed_memory():
    assert _run("django")["faults"] < 50


_TEMPORARIES = """
import json, resource, sys
import numpy as np
from fabric_engine.allocator import keep_freed_memory

kept = keep_freed_memory() if sys.argv[1] == "keep" else None
def tick():  # temporaries of a few MB to 20 MB, as a large fabric's tick makes them
    a = np.ones(2_500_000)
    return float((a * 2.0 + np.arange(len(a))).sum())
for _ in range(2):
    tick()
before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
for _ in range(5):
    tick()
print(json.dumps({"kept": kept, "faults": (resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before) / 5}))
"""


def test_large_temporaries_come_from_the_kept_heap_not_fresh_mappings():
    env = {k: v for k, v in os.environ.items() if not k.startswith("MALLOC_")}
    out = subprocess.run([sys.executable, "-c", _TEMPORARIES, "keep"], cwd=ROOT, env=env, check=True,
                         capture_output=True, text=True, timeout=120).stdout
    kept = json.loads(out.splitlines()[-1])
    # a trim threshold alone fixes glibc's mmap threshold at 128 kB: each 20 MB array is mapped and faulted afresh
    assert kept["kept"] is True and kept["faults"] < 50, kept


def test_an_operators_malloc_settings_are_left_alone():
    assert _run("keep", MALLOC_TRIM_THRESHOLD_="131072")["kept"] is False
    assert _run("keep", MALLOC_MMAP_THRESHOLD_="131072")["kept"] is False


_FREE_AND_RELEASE = """
import gc, json, os
from fabric_engine.allocator import keep_freed_memory, release_freed_memory
from fabric_engine.routing import route
from fabric_engine.topology.generate import fat_tree

def rss():
    return int(open(f"/proc/{os.getpid()}/statm").read().split()[1]) * os.sysconf("SC_PAGE_SIZE") >> 20

keep_freed_memory()
start = rss()
fabrics = [route(fat_tree(hosts=2048, radix=32, levels=3), "minhop") for _ in range(4)]
built = rss()
del fabrics
gc.collect()
dropped = rss()
released = release_freed_memory()
print(json.dumps({"built": built - start, "dropped": dropped - start, "after": rss() - start, "released": released}))
"""


def test_a_dropped_fabric_is_given_back_to_the_kernel():
    env = {k: v for k, v in os.environ.items() if not k.startswith("MALLOC_")}
    out = subprocess.run([sys.executable, "-c", _FREE_AND_RELEASE], cwd=ROOT, env=env, check=True,
                         capture_output=True, text=True, timeout=120).stdout
    mib = json.loads(out.splitlines()[-1])
    assert mib["released"] is True and mib["built"] > 15, mib
    # kept for reuse after the arrays are freed, given back by the release
    assert mib["after"] < mib["dropped"] - 10, mib
