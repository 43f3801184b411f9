"""Issue 26: a reader tells a file from its content by type, never by whether a string names a file.

A ``Path`` (the CLI, settings, a collector's configured path) is read; a ``str`` or ``bytes`` is the content,
even when it happens to name an existing file (``/etc/passwd``, a fabric file written here): it is parsed as
text and fails as text, naming ``<text>`` or the given source, never the file's lines.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from fabric_engine import formats
from fabric_engine.errors import FormatError
from fabric_engine.routing.guid_files import read_guids
from fabric_engine.routing.updn import read_root_guids
from fabric_engine.topology.generate import fat_tree
from fabric_engine.twin import read_plan

FIRST_PASSWD_LINE = Path("/etc/passwd").read_text().splitlines()[0] if Path("/etc/passwd").is_file() else "root:x:0:0"


@pytest.fixture
def fabric_file(tmp_path) -> Path:
    p = tmp_path / "fabric.topo"
    p.write_text(formats.write(fat_tree(hosts=4, radix=4), "ibnetdiscover"))
    return p


@pytest.mark.parametrize("fmt", [None, *formats.FORMATS])
def test_a_str_naming_a_file_is_text(fabric_file, fmt):
    for text in (str(fabric_file), str(fabric_file) + "\n", "/etc/passwd", fabric_file.as_uri()):
        for data in (text, text.encode()):
            with pytest.raises(FormatError) as exc:
                formats.read(data, fmt, source="upload.topo" if fmt is None else None)
            assert FIRST_PASSWD_LINE not in str(exc.value) and "Switch" not in str(exc.value)
    with pytest.raises(FormatError) as exc:
        formats.read("/etc/passwd", "ibnetdiscover")
    assert exc.value.source == "<text>" and "1 line(s) skipped" in str(exc.value)  # the file has more lines


def test_a_path_is_read(fabric_file, tmp_path):
    assert formats.read(fabric_file).num_hosts == 4
    with pytest.raises(FormatError, match="cannot read") as exc:
        formats.read(tmp_path / "missing.topo")
    assert exc.value.source == str(tmp_path / "missing.topo")
    with pytest.raises(TypeError, match="Path, str or bytes"):
        formats.read(None)


def test_guid_files_by_type(tmp_path):
    p = tmp_path / "roots.guids"
    p.write_text("0x98039b0300000001\n")
    assert read_guids(p) == read_root_guids(p) == [0x98039B0300000001]
    for text in (str(p), "/etc/passwd"):
        with pytest.raises(FormatError, match="not a GUID") as exc:
            read_guids(text)
        assert exc.value.source == "<guids>" and exc.value.line == 1
        with pytest.raises(FormatError, match="not a GUID"):
            read_root_guids(text)
    with pytest.raises(TypeError, match="Path or the text"):
        read_guids(b"0x1\n")


@pytest.mark.parametrize("name", ["plan.csv", "plan.topo", "plan.ibnd", "plan.net", "plan.json", "plan"])
def test_a_plan_naming_a_file_is_text(fabric_file, name):
    assert read_plan(fabric_file.read_text(), "design.topo").num_cables == fat_tree(hosts=4, radix=4).num_links
    for text in (str(fabric_file), "/etc/passwd"):
        for data in (text, text.encode()):
            with pytest.raises(FormatError) as exc:
                read_plan(data, name)
            assert exc.value.source == name and FIRST_PASSWD_LINE not in str(exc.value)
