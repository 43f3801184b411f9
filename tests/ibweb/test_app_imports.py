"""Layering of ``ibweb``: no import loop between its apps and top-level modules, and docs/architecture.md says
who imports whom exactly.

The graph is read from the source (AST of every ``.py`` of ``ibweb``, migrations left out): every import,
also inside functions and under ``TYPE_CHECKING``, relative ones resolved. Its nodes are the top-level
modules and packages of ``ibweb`` (``fabrics``, ``access``, ``relabel``, ...; ``__init__`` is the package's
own ``__init__.py``); an import of ``ibweb.fabrics.models`` from ``ibweb/twin/views.py`` is the edge
twin -> fabrics. A dotted path declared as data (``watch_parts`` on an ``AppConfig``) is not an import: the app
that declares it is the one above.
"""

from __future__ import annotations

import ast
import re
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "architecture.md"
#: The header of the document's table this test compares with the graph.
TABLE_HEADER = "| module or package of `ibweb` | imports from `ibweb` |"

Edges = dict[str, dict[str, list[str]]]  # unit -> imported unit -> ["file:line", ...]


def _unit(module: str) -> str | None:
    """The top-level module or package of ``ibweb`` a dotted module name is in (``__init__``: the package itself)."""
    parts = module.split(".")
    if parts[0] != "ibweb":
        return None
    return parts[1] if len(parts) > 1 else "__init__"


def _targets(node: ast.Import | ast.ImportFrom, package: str) -> list[str]:
    """The modules an import statement names, relative ones resolved against ``package``."""
    if isinstance(node, ast.Import):
        return [a.name for a in node.names]
    base = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package if node.level else ""
    target = ".".join(p for p in (base, node.module) if p)
    return [f"{target}.{a.name}" for a in node.names] if target == "ibweb" else [target]


def module_imports(root: Path = ROOT) -> dict[str, list[tuple[str, int, str]]]:
    """``{file: [(module of the file, line, imported module), ...]}`` for every ``.py`` of ``ibweb`` but migrations."""
    out = {}
    for path in sorted((root / "ibweb").rglob("*.py")):
        rel = path.relative_to(root)
        if "migrations" in rel.parts:
            continue
        module = ".".join(rel.with_suffix("").parts)
        package = module.rsplit(".", 1)[0]
        if path.name == "__init__.py":
            module = package
        out[str(rel)] = [(module, node.lineno, target) for node in ast.walk(ast.parse(path.read_text(), str(rel)))
                         if isinstance(node, ast.Import | ast.ImportFrom) for target in _targets(node, package)]
    return out


def unit_graph(imports: dict[str, list[tuple[str, int, str]]]) -> Edges:
    """Edges between the top-level units of ``ibweb``, each with the ``file:line`` of the imports that make it."""
    edges: Edges = defaultdict(lambda: defaultdict(list))
    for file, found in imports.items():
        for module, line, target in found:
            src, dst = _unit(module), _unit(target)
            if dst is not None and dst != src:
                edges[src][dst].append(f"{file}:{line} imports {target}")
    return edges


def _path(edges: Edges, start: str, end: str) -> list[str] | None:
    """A shortest path of imports from ``start`` to ``end`` (breadth-first), or None."""
    paths, frontier = {start: [start]}, [start]
    while frontier and end not in paths:
        reached = []
        for v in frontier:
            for w in sorted(edges.get(v, {})):
                if w not in paths:
                    paths[w] = paths[v] + [w]
                    reached.append(w)
        frontier = reached
    return paths.get(end)


def cycles(edges: Edges) -> list[list[str]]:
    """A shortest cycle through each import that is on one, each cycle once, from its least unit: ``[a, b, a]``."""
    found = set()
    for a in sorted(edges):  # a few dozen units, a few hundred edges
        for b in sorted(edges[a]):
            back = _path(edges, b, a)
            if back is not None:
                cycle = [a, *back[:-1]]
                first = cycle.index(min(cycle))
                found.add((*cycle[first:], *cycle[:first], min(cycle)))
    return sorted(map(list, found))


def describe(cycle: list[str], edges: Edges) -> str:
    """A cycle with the files and lines of each of its edges."""
    lines = [" -> ".join(cycle)]
    for a, b in zip(cycle, cycle[1:], strict=False):
        lines += [f"  {a} -> {b}:"] + [f"    {where}" for where in edges[a][b]]
    return "\n".join(lines)


def documented(text: str) -> dict[str, set[str]]:
    """The document's "who imports whom" table: ``{unit: {units it imports}}`` (``–``: none)."""
    lines = text.splitlines()
    assert TABLE_HEADER in lines, f"docs/architecture.md has no table headed {TABLE_HEADER}"
    start = lines.index(TABLE_HEADER) + 2  # header, then the |---| line
    table = {}
    for line in lines[start:]:
        if not line.startswith("|"):
            break
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        assert len(cells) == 2, f"docs/architecture.md: a row of two cells expected: {line}"
        [name] = re.findall(r"`([^`]+)`", cells[0])
        assert name not in table, f"docs/architecture.md: {name} has two rows"
        table[name] = set(re.findall(r"`([^`]+)`", cells[1]))
    return table


def table(edges: Edges) -> str:
    """The table as the document should have it: the units that import others, lowest first."""
    rows = [TABLE_HEADER, "|---|---|"]
    for unit in sorted((u for u in edges if edges[u]), key=lambda u: (_depth(u, edges), u)):
        rows.append(f"| `{unit}` | {', '.join(f'`{d}`' for d in sorted(edges[unit]))} |")
    return "\n".join(rows)


def _depth(unit: str, edges: Edges, seen: frozenset = frozenset()) -> int:
    """How many layers a unit stands on (0: it imports nothing of ``ibweb``); a cycle counts once."""
    below = [d for d in edges.get(unit, {}) if d not in seen]
    return 1 + max((_depth(d, edges, seen | {unit}) for d in below), default=-1) if edges.get(unit) else 0


def differences(doc: dict[str, set[str]], edges: Edges) -> list[str]:
    """Each unit whose row in the document (none: it imports nothing) differs from its imports."""
    graph = {unit: set(deps) for unit, deps in edges.items() if deps}
    return [f"{unit}: the document says {sorted(doc.get(unit, ()))}, the code imports {sorted(graph.get(unit, ()))}"
            for unit in sorted(set(doc) | set(graph)) if doc.get(unit, set()) != graph.get(unit, set())]


def out_of_order(doc: dict[str, set[str]]) -> list[str]:
    """Each row of the document naming a unit whose own row comes later: the table reads lowest layer first."""
    rows = list(doc)
    return [f"{unit} imports {d}, listed below it" for i, unit in enumerate(rows) for d in sorted(doc[unit])
            if d in doc and rows.index(d) > i]


def model_imports(imports: dict[str, list[tuple[str, int, str]]], unit: str) -> list[str]:
    """The imports of any ``models`` module (an app's, Django's contrib apps'; not ``django.db.models``) in ``unit``."""
    return [f"{file}:{line} imports {target}" for file, rows in imports.items() for module, line, target in rows
            if _unit(module) == unit and re.search(r"(^|\.)models(\.|$)", target)
            and not target.startswith("django.db.models")]


def test_no_import_loop_between_the_apps_and_top_level_modules_issue_24():
    edges = unit_graph(module_imports())
    found = cycles(edges)
    assert not found, "import loops between the top-level units of ibweb:\n" + "\n".join(
        describe(c, edges) for c in found)


def test_the_architecture_document_says_who_imports_whom_issue_24():
    edges = unit_graph(module_imports())
    doc = documented(DOC.read_text())
    wrong = differences(doc, edges) + out_of_order(doc)
    assert not wrong, ("docs/architecture.md's who-imports-whom table differs from the imports:\n" + "\n".join(wrong)
                       + "\n\nthe table as the imports are:\n" + table(edges))


def test_the_access_layer_imports_no_models_issue_24():
    """``ibweb.access`` is model-free: the models import it (their querysets), never the other way round."""
    found = model_imports(module_imports(), "access")
    assert not found, "the access layer imports models:\n" + "\n".join(found)


# ------------------------------------------------------------------ the checks themselves, on a made-up package
def _package(tmp_path: Path, files: dict[str, str]) -> dict[str, list[tuple[str, int, str]]]:
    for name, text in files.items():
        path = tmp_path / "ibweb" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return module_imports(tmp_path)


def test_a_function_local_or_relative_import_makes_a_cycle_named_with_its_files_and_lines(tmp_path):
    imports = _package(tmp_path, {
        "__init__.py": "",
        "a/__init__.py": "",
        "a/views.py": "import os\n\n\ndef f():\n    from ibweb.b.models import X\n",
        "b/__init__.py": "",
        "b/models.py": "from ..a import views\n",
        "b/migrations/0001_initial.py": "from ibweb.c import models\n",
        "c.py": "from . import a\n",
    })
    edges = unit_graph(imports)
    assert {u: sorted(d) for u, d in edges.items()} == {"a": ["b"], "b": ["a"], "c": ["a"]}
    [cycle] = cycles(edges)
    assert cycle == ["a", "b", "a"]
    assert describe(cycle, edges) == ("a -> b -> a\n  a -> b:\n    ibweb/a/views.py:5 imports ibweb.b.models\n"
                                      "  b -> a:\n    ibweb/b/models.py:1 imports ibweb.a")


def test_a_longer_cycle_is_found_and_the_table_is_read_as_written(tmp_path):
    edges = unit_graph(_package(tmp_path, {"a.py": "import ibweb.b\n", "b.py": "from ibweb import c\n",
                                           "c.py": "from ibweb.a import x\n", "d.py": "import ibweb.a\n"}))
    assert cycles(edges) == [["a", "b", "c", "a"]]
    text = f"intro\n\n{TABLE_HEADER}\n|---|---|\n| `b` | `c` |\n| `d` | `a`, `c` |\n\nafter | not a row\n"
    assert documented(text) == {"b": {"c"}, "d": {"a", "c"}}
    assert out_of_order(documented(text)) == []
    assert out_of_order({"d": {"b"}, "b": {"c"}}) == ["d imports b, listed below it"]


def test_the_document_and_the_access_layer_are_held_to_the_imports(tmp_path):
    imports = _package(tmp_path, {
        "access/__init__.py": "from django.db import models\nfrom ibweb.runtime import record\n",
        "access/view.py": "def f():\n    from django.contrib.auth.models import User\n",
        "runtime/record.py": "from ibweb.fabrics.models import Fabric\n"})
    edges = unit_graph(imports)
    assert differences({"access": {"runtime"}, "runtime": {"fabrics"}}, edges) == []
    assert differences({"access": {"runtime", "tenancy"}, "twin": set()}, edges) == [
        "access: the document says ['runtime', 'tenancy'], the code imports ['runtime']",
        "runtime: the document says [], the code imports ['fabrics']"]
    assert table(edges).splitlines()[2:] == ["| `runtime` | `fabrics` |", "| `access` | `runtime` |"]
    assert model_imports(imports, "access") == ["ibweb/access/view.py:2 imports django.contrib.auth.models"]
