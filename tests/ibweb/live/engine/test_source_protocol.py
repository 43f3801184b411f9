"""Every source kind implements the whole source protocol; the runner uses nothing else; the runner owns the
sequence numbers; the telemetry source steps through the twin it is given and imports no twin (issue 24)."""

import ast
import asyncio
import dataclasses
import inspect
import time
from pathlib import Path
from types import SimpleNamespace
from typing import get_type_hints

import pytest
from django.apps import apps
from django.core.exceptions import ImproperlyConfigured

from fabric_engine.routing import route
from fabric_engine.topology.generate import fat_tree
from ibweb.live.engine import policy, record_publisher
from ibweb.live.engine import runner as runner_module
from ibweb.live.engine.emulated import EmulatedSource
from ibweb.live.engine.sources import FabricSource, NoSource, source_for, source_kinds
from ibweb.runtime import source_registry
from ibweb.telemetry.source import NoTwin, SourceTwin, TelemetrySource
from ibweb.twin import source_factory
from ibweb.twin.fabric_twin import FabricTwin
from ibweb.twin.source_factory import telemetry_source
from tests.fabric_engine.test_import_isolation import _offenders


def members(protocol: type) -> tuple[set[str], dict[str, object]]:
    """The data members (annotated) and the methods a protocol declares."""
    data = set(protocol.__annotations__)
    methods = {n: v for n, v in vars(protocol).items() if not n.startswith("_") and n not in data}
    return data, methods


def missing(cls: type, protocol: type) -> list[str]:
    """What ``cls`` does not define of ``protocol``: a data member neither annotated nor an attribute of the
    class, a method it does not define itself, or one of another kind (coroutine or not) or other parameters."""
    data, methods = members(protocol)
    annotated = {n for klass in cls.__mro__ for n in getattr(klass, "__annotations__", {})}
    out = [f"{cls.__name__}.{n}" for n in sorted(data) if n not in annotated and not hasattr(cls, n)]
    for name, declared in sorted(methods.items()):
        own = getattr(cls, name, None)
        if isinstance(declared, property):
            if not (isinstance(own, property) or name in annotated or (own is not None and not callable(own))):
                out.append(f"{cls.__name__}.{name}")
            continue
        if own is None or own is declared or not callable(own):
            out.append(f"{cls.__name__}.{name}")
            continue
        same_kind = inspect.iscoroutinefunction(own) == inspect.iscoroutinefunction(declared)
        params = [p.name for p in inspect.signature(own).parameters.values()]
        if not same_kind or params != [p.name for p in inspect.signature(declared).parameters.values()]:
            out.append(f"{cls.__name__}.{name}{inspect.signature(own)}")
    return out


def source_class(mode: str) -> type:
    """The class a mode's source factory builds (a class, or a function annotated with the class it returns)."""
    factory = source_for(mode)
    return factory if isinstance(factory, type) else get_type_hints(factory)["return"]


def test_every_source_kind_defines_every_member_of_the_protocol():
    classes = {mode: source_class(mode) for mode in source_kinds()}
    assert classes == {"emulated": EmulatedSource, "telemetry": TelemetrySource}
    assert {"catalog", "catalog_version", "step", "fabric"} <= set().union(*members(FabricSource))
    assert [m for cls in classes.values() for m in missing(cls, FabricSource)] == []


def test_each_app_registers_its_own_kinds_at_start_and_the_telemetry_one_brings_the_twin_issue_36():
    assert source_kinds() == {"emulated": EmulatedSource, "telemetry": telemetry_source}
    with pytest.raises(NoSource, match=r"no source for fabrics of mode 'spec'; known: emulated, telemetry"):
        source_for("spec")


def test_a_kind_registered_twice_is_an_error_naming_both_and_changes_nothing_issue_36():
    twice = (r"^fabric source 'telemetry' registered twice: by ibweb\.twin\.source_factory\.telemetry_source "
             r"and by ibweb\.telemetry\.source\.TelemetrySource$")
    with pytest.raises(ImproperlyConfigured, match=twice):
        source_registry.register("telemetry", TelemetrySource)
    source_registry.register("emulated", EmulatedSource)  # the same factory again (a second ready()): no change
    assert source_kinds() == {"emulated": EmulatedSource, "telemetry": telemetry_source}
    fresh = source_registry.SourceRegistry()
    fresh.register("a", EmulatedSource)
    with pytest.raises(ImproperlyConfigured, match="'a' registered twice"):
        fresh.register("a", TelemetrySource)
    assert fresh.factories() == {"a": EmulatedSource} and "a" not in source_kinds()


def test_an_app_registering_a_taken_kind_fails_its_start_issue_36(monkeypatch):
    def other_telemetry_source(row) -> TelemetrySource:
        return TelemetrySource(row)

    monkeypatch.setattr(source_factory, "telemetry_source", other_telemetry_source)
    with pytest.raises(ImproperlyConfigured, match="other_telemetry_source"):
        apps.get_app_config("twin").ready()
    assert source_for("telemetry") is telemetry_source


def test_the_twins_define_what_the_telemetry_source_asks_of_them():
    assert missing(FabricTwin, SourceTwin) == [] and missing(NoTwin, SourceTwin) == []


def test_the_check_finds_what_a_source_lacks():
    class Partial:
        fabric = routing = None

        def step(self, seq, now):  # not a coroutine
            return None

    assert {"Partial.topology_version", "Partial.catalog", "Partial.start"} <= set(missing(Partial, FabricSource))
    assert any(m.startswith("Partial.step") for m in missing(Partial, FabricSource))


def test_the_runner_uses_only_what_the_protocol_declares():
    used, reached = set(), []
    for module in (runner_module, record_publisher, policy):  # the runner, and what it hands its source to
        tree = ast.parse(Path(module.__file__).read_text())
        used |= {node.attr for node in ast.walk(tree) if isinstance(node, ast.Attribute)
                 and (isinstance(node.value, ast.Attribute) and node.value.attr == "source"
                      or isinstance(node.value, ast.Name) and node.value.id == "source")}
        reached += [ast.unparse(node) for node in ast.walk(tree) if isinstance(node, ast.Call)
                    and isinstance(node.func, ast.Name) and node.func.id in ("getattr", "hasattr")
                    and "source" in ast.unparse(node.args[0])]
    data, methods = members(FabricSource)
    assert {"step", "catalog", "apply_policy", "topology_version"} <= used <= data | set(methods) and reached == []


def test_telemetry_imports_no_twin_module():
    assert _offenders("ibweb.telemetry", "ibweb.twin") == []


class RecordingTwin(NoTwin):
    def __init__(self) -> None:
        self.seen = []

    def step(self, routing, state, now, *, stale=None, compared=True):
        self.seen.append((routing, state.seq, compared))
        return dataclasses.replace(state, alerts=[*state.alerts, {"kind": "twin"}])

    def catalog(self, routing, now):
        return [{"id": "j1"}]


def telemetry(twin=None) -> TelemetrySource:
    row = SimpleNamespace(pk=1, slug="tele", tick_s=1.0, routing_engine="minhop", routing_options={})
    source = TelemetrySource(row, twin=twin)
    r = route(fat_tree(hosts=16, radix=8))
    source.fabric, source.router = r.fabric, SimpleNamespace(routing=r)
    return source


def test_the_telemetry_source_numbers_its_state_with_the_seq_it_is_given_and_steps_the_twin_it_is_given():
    twin = RecordingTwin()
    source = telemetry(twin)
    states = [source.state(None, None, time.time(), seq) for seq in (41, 7)]  # no sweep: a stale state
    assert [s.seq for s in states] == [41, 7]
    assert twin.seen == [(source.routing, 41, False), (source.routing, 7, False)]
    assert states[0].alerts[-1] == {"kind": "twin"} and source.catalog(source.routing) == [{"id": "j1"}]


def test_without_a_twin_the_telemetry_source_shows_the_counters_alone():
    source = telemetry()
    state = source.state(None, None, time.time(), 3)
    assert isinstance(source.twin, NoTwin) and state.seq == 3 and state.jobs == []
    assert [a["kind"] for a in state.alerts] == ["stale"] and source.catalog(source.routing) == []


def test_the_emulated_source_numbers_its_states_with_the_seq_it_is_given():
    spec = {"topology": {"generator": "fat_tree", "hosts": 16, "radix": 8}, "routing": "minhop", "jobs": []}
    source = EmulatedSource(SimpleNamespace(scenario=lambda: spec))

    async def run():
        async def progress(fraction, message):
            return None

        await source.start(progress)
        return [(await source.step(seq, 0.0)).seq for seq in (500, 501, 3)]

    assert asyncio.run(run()) == [500, 501, 3]
    assert not hasattr(source.emulator, "seq")  # one owner: nothing for the emulator to count on its own
    assert source.catalog(source.routing) == []
