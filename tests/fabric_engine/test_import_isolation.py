"""Layering: the engine imports no web code; the live app and the telemetry app do not import each other."""

import ast
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_fabric_engine_imports_without_django():
    code = (
        "import sys, fabric_engine, fabric_engine.scenario, fabric_engine.emulator, fabric_engine.formats.json_format\n"
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in ('django', 'ibweb', 'channels', 'celery'))\n"
        "print(','.join(bad))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert out == ""


def _imports(package: str) -> dict[str, set[str]]:
    """Every module a module of ``package`` imports, anywhere in it (also inside functions), by file."""
    base = ROOT / package.replace(".", "/")
    out: dict[str, set[str]] = {}
    for path in sorted(base.rglob("*.py")):
        module = ".".join(path.relative_to(ROOT).with_suffix("").parts)
        names: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                names.update(a.name for a in node.names)
            elif isinstance(node, ast.ImportFrom):
                if node.level:  # relative: resolve against the module's package
                    parent = module.rsplit(".", node.level if path.name != "__init__.py" else node.level - 1)[0]
                    target = f"{parent}.{node.module}" if node.module else parent
                else:
                    target = node.module or ""
                names.add(target)
                names.update(f"{target}.{a.name}" for a in node.names)
        out[str(path.relative_to(ROOT))] = names
    return out


def _offenders(package: str, forbidden: str) -> list[str]:
    return [f"{path}: {name}" for path, names in _imports(package).items() for name in sorted(names)
            if name == forbidden or name.startswith(forbidden + ".")]


def test_live_and_telemetry_do_not_import_each_other_issue_13():
    assert _offenders("ibweb.live", "ibweb.telemetry") == []
    assert _offenders("ibweb.telemetry", "ibweb.live") == []


def test_importing_live_loads_no_telemetry_module_and_the_other_way_round_issue_13():
    """In a Django process: importing every module of one app adds no module of the other to those setup loads."""
    code = (
        "import os, sys, pkgutil, importlib, django\n"
        "os.environ.setdefault('DJANGO_SETTINGS_MODULE', 'ibweb.settings')\n"
        "django.setup()\n"
        "def load(pkg):\n"
        "    base = importlib.import_module(pkg)\n"
        "    for m in pkgutil.walk_packages(base.__path__, pkg + '.'):\n"
        "        if '.migrations' not in m.name:\n"
        "            importlib.import_module(m.name)\n"
        "mine, other = sys.argv[1], sys.argv[2]\n"
        "before = {m for m in sys.modules if m.startswith(other + '.')}\n"
        "load(mine)\n"
        "print(','.join(sorted({m for m in sys.modules if m.startswith(other + '.')} - before)))\n"
    )
    for mine, other in (("ibweb.live", "ibweb.telemetry"), ("ibweb.telemetry", "ibweb.live")):
        out = subprocess.run([sys.executable, "-c", code, mine, other], capture_output=True, text=True, cwd=ROOT,
                             check=True).stdout.strip()
        assert out == "", f"importing {mine} loaded {out}"
