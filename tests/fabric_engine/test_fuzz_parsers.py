"""Issue 14: every reader fuzzed with random and mutated real files; only the engine's errors come out, memory bounded.

Seeds are the captured and generated files of ``tests/data``; see ``tests/support/fuzz.py`` for the mutations,
the memory check and ``IBWEB_FUZZ=deep`` for a longer run.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from fabric_engine import formats
from fabric_engine.formats import json_format, netfile, opensm_lfts, opensm_partitions, opensm_qos
from fabric_engine.scenario import build_fabric
from fabric_engine.telemetry import CounterSamples, parse_perfquery, read_discovery
from fabric_engine.topology.generate import fat_tree
from fabric_engine.topology.limits import GENERATOR_PARAMETERS
from tests.support.fuzz import EDGE_NUMBERS, FUZZ, SAMPLE_RECORDS, check, mutated

DATA = Path(__file__).parents[1] / "data"
TELEMETRY = DATA / "telemetry"


def _files(paths) -> dict[str, str]:
    return {p.name: p.read_text() for p in paths}


TOPOLOGIES = {
    **_files(sorted(DATA.glob("*.txt"))),
    **_files([TELEMETRY / "ibnetdiscover.txt", TELEMETRY / "fat-tree-8.net"]),
    **_files(sorted((DATA / "captures" / "ibnetdiscover").glob("*"))),  # issue 22: real-capture dialects
    "fat-tree.json": formats.write(fat_tree(hosts=8, radix=8, storage_servers=1, mgmt_nodes=1), "json"),
    "fat-tree.net": formats.write(fat_tree(hosts=8, radix=4), "ibsim"),
}
LINKINFO = _files(sorted(TELEMETRY.glob("iblinkinfo*.txt")))
PERFQUERY = _files(sorted(TELEMETRY.glob("perfquery*.txt")))
LFTS = _files(sorted(TELEMETRY.glob("opensm-lfts*.dump")))
PARTITIONS = {
    "doc": opensm_partitions.__doc__.split(">>> parts = parse(\"")[1].split('")')[0],
    "written": opensm_partitions.write(opensm_partitions.parse(
        "Default=0x7fff, ipoib : ALL=full ;\n"
        "acme=0x8001, ipoib, mtu=5, rate=16, sl=1, defmember=full :\n"
        "  0xb83fd20300000011, 0xb83fd20300000021=limited,\n  ALL_SWITCHES=full ;\n"
        "storage=0x0002,indx0 : mgid=ff12:401b::1,sl=1,Q_Key=0x00000b1b ; # a multicast group\n"
        "0x0003 : NONE ;\n")),
}
QOS = {
    "opensm.conf": opensm_qos.write_opensm_conf(opensm_qos.DEFAULT_TABLES, {"qos_ca": opensm_qos.DEFAULT_TABLES}),
    "qos-policy.conf": opensm_qos.write_policy(
        [opensm_qos.QosLevel("gold", 1, 5, 16, "for acme"), opensm_qos.QosLevel("bulk", 2)],
        [opensm_qos.QosMatchRule("gold", [0x8001, 0x8002]), opensm_qos.QosMatchRule("bulk", [3])], 0)
    + "qos-ulps\n    default : 0\n    any, pkey 0x0001-0x0004 : 3\nend-qos-ulps\n",
}
LAB = formats.read(TOPOLOGIES["ibnetdiscover.txt"], source="lab")


def limit(text: str | bytes) -> int:
    """Memory a reader may allocate for ``text``: a small constant plus a multiple of its length."""
    return (8 << 20) + 64 * len(text)


# Random text made of the characters these formats are written in, plus anything at all.
_SYNTAX = st.text(alphabet='SwitchCaHcalidport0123456789x[]()"#=:.,;/- \t\nABCDEFabcdef', max_size=400)
_ANY = st.text(max_size=200)


@FUZZ
@given(st.one_of(mutated(TOPOLOGIES), _SYNTAX, _ANY))
def test_topology_readers(text):
    for fmt in (None, "ibnetdiscover", "ibsim", "json"):
        check(lambda fmt=fmt: formats.read(text, fmt=fmt, source="fuzz"), limit(text))


@FUZZ
@given(mutated(TOPOLOGIES), st.integers(0, 3))
def test_topology_readers_on_gzip_and_bytes(text, how):
    data = text.encode("utf-8", "surrogatepass")
    if how == 1:
        data = gzip.compress(data)
    elif how == 2:
        data = gzip.compress(data)[: len(data) // 2]
    elif how == 3:
        data = data[:7] + b"\xff\xfe" + data[7:]
    check(lambda: formats.read(data, source="fuzz.gz"), limit(text) + len(data))


@FUZZ
@given(mutated(TOPOLOGIES))
def test_netfile_in_both_dialects(text):
    for dialect in ("ibnetdiscover", "ibsim"):
        check(lambda dialect=dialect: netfile.parse(text, "fuzz", dialect), limit(text))


_JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.sampled_from(EDGE_NUMBERS) | st.integers() | st.floats() | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=5) | st.dictionaries(st.text(max_size=8), inner, max_size=5),
    max_leaves=20)


@st.composite
def _json_documents(draw) -> dict:
    """The JSON of a real fabric with a field, an entry or an array replaced by something else."""
    doc = json.loads(TOPOLOGIES["fat-tree.json"])
    for _ in range(draw(st.integers(1, 3))):
        section = draw(st.sampled_from(("nodes", "links", None)))
        if section is None:
            key = draw(st.sampled_from(("format", "version", "name", "nodes", "links")))
            doc[key] = draw(_JSON_VALUES)
            continue
        block = doc[section] if isinstance(doc.get(section), dict) else {}
        if not block:
            continue
        field = draw(st.sampled_from(sorted(block)))
        column = block[field]
        how = draw(st.sampled_from(("entry", "column", "grow", "drop")))
        if how == "entry" and isinstance(column, list) and column:
            column[draw(st.integers(0, len(column) - 1))] = draw(_JSON_VALUES)
        elif how == "column":
            block[field] = draw(_JSON_VALUES)
        elif how == "grow" and isinstance(column, list):
            column.extend([draw(_JSON_VALUES)] * draw(st.integers(1, 3)))
        else:
            block.pop(field, None)
    return doc


@FUZZ
@given(_json_documents())
def test_json_reader_on_mutated_documents(doc):
    check(lambda: json_format.from_json(doc, "fuzz.json"), limit(""))
    check(lambda: build_fabric({"fabric": doc, "source": "fuzz.json"}), limit(""))
    text = json.dumps(doc)
    check(lambda: json_format.from_json(text, "fuzz.json"), limit(text))


@FUZZ
@given(st.sampled_from(("[" * 100_000, '{"a":' * 100_000, "1" * 5000, "[1e999999]", '{"format": "ibweb-fabric"')))
def test_json_reader_on_pathological_text(text):
    check(lambda: json_format.from_json(text, "fuzz.json"), limit(text))


@FUZZ
@given(st.one_of(mutated(LINKINFO), _SYNTAX, _ANY))
def test_iblinkinfo_reader_and_fabric(text):
    check(lambda: read_discovery(text, "fuzz"), limit(text))


@FUZZ
@given(st.one_of(mutated(PERFQUERY), _SYNTAX, _ANY), st.floats(allow_nan=True))
def test_perfquery_reader(text, t):
    check(lambda: parse_perfquery(text, t, "fuzz"), limit(text))


@FUZZ
@given(SAMPLE_RECORDS)
def test_pushed_sample_records(records):
    check(lambda: CounterSamples.from_records(records, "samples").merged(), limit(""))


@FUZZ
@given(st.one_of(mutated(PARTITIONS), _SYNTAX, _ANY))
def test_partitions_reader(text):
    check(lambda: opensm_partitions.parse(text, "fuzz"), limit(text))


@FUZZ
@given(st.one_of(mutated(QOS), _SYNTAX, _ANY))
def test_qos_readers(text):
    check(lambda: opensm_qos.parse_opensm_conf(text, "fuzz"), limit(text))
    check(lambda: opensm_qos.parse_policy(text, "fuzz"), limit(text))
    check(lambda: opensm_qos.parse_sl2vl(text, "fuzz"), limit(text))
    check(lambda: opensm_qos.parse_vlarb(text, "fuzz"), limit(text))


@FUZZ
@given(mutated(LFTS))
def test_opensm_lft_dump_reader(text):
    check(lambda: opensm_lfts.read(text, LAB, "fuzz"), limit(text))


_PARAM_VALUES = st.sampled_from(EDGE_NUMBERS[:14]) | st.integers(-3, 70) | st.floats(-1, 300) | \
    st.sampled_from(("NDR", "HDR", "x", "", "none", "subnet", "dedicated", "spread")) | st.none() | st.booleans()


@st.composite
def _topologies(draw) -> dict:
    generator = draw(st.sampled_from(sorted(GENERATOR_PARAMETERS)))
    names = sorted(GENERATOR_PARAMETERS[generator]) + ["bogus"]
    params = draw(st.dictionaries(st.sampled_from(names), _PARAM_VALUES, max_size=5))
    return {"generator": generator, **params}


@FUZZ
@given(_topologies())
def test_generators_from_specs(topology):
    """Any spec is built or refused; what is accepted fits one subnet, and memory stays bounded."""
    out = check(lambda: build_fabric(topology), 256 << 20)
    if not isinstance(out, Exception):
        assert out.max_lid <= 0xBFFF and int(out.nports.max()) <= 254


@pytest.mark.parametrize("name", sorted(TOPOLOGIES))
def test_seed_topologies_are_read(name):
    """The seeds themselves parse (broken_* ones raise the engine's error), so mutations start from real files."""
    out = check(lambda: formats.read(TOPOLOGIES[name], source=name), limit(TOPOLOGIES[name]))
    assert isinstance(out, Exception) == name.startswith("broken_")
