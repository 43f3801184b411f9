"""OpenSM's guid files (root, compute node, I/O node): one reader, read as OpenSM's parse_node_map reads them."""

from __future__ import annotations

import gzip

import pytest

from fabric_engine.errors import FormatError
from fabric_engine.routing import guid_files
from fabric_engine.routing.guid_files import read_guids, write_guids
from fabric_engine.routing.updn import read_root_guids


def test_comments_blanks_names_and_number_bases(tmp_path):
    p = tmp_path / "cns.guids"
    p.write_text("# compute nodes\n\n   0x0002c90300a1b2c4   dgx0001 mlx5_0\n0X2A#no blank needed\n"
                 "\t# indented comment\n42\n010\n0\n")
    # strtoull(p, &e, 0): 0x hex, a leading 0 octal, otherwise decimal
    assert read_guids(p) == [0x0002C90300A1B2C4, 42, 42, 8, 0]
    assert read_root_guids(p) == read_guids(p)  # updn's -a reads through the same reader


def test_text_and_gzip(tmp_path):
    assert read_guids("0x1\n0x2\n") == [1, 2]
    p = tmp_path / "roots.guids.gz"
    p.write_bytes(gzip.compress(b"0x98039b0300000001\n"))
    assert read_guids(p) == [0x98039B0300000001]


@pytest.mark.parametrize("line, message", [
    ("98039b0300000001", "OpenSM reads a GUID without 0x as decimal"),
    ("0x12zz", "not a GUID"),
    ("guid 0x12", "not a GUID"),
    ("09", "not a GUID"),
    ("-0x1", "not a GUID"),
    ("0x1ffffffffffffffff", "more than 64 bits"),
])
def test_bad_lines_name_file_and_line(tmp_path, line, message):
    p = tmp_path / "bad.guids"
    p.write_text(f"# header\n0x1\n{line}\n")
    with pytest.raises(FormatError, match=message) as exc:
        read_guids(p)
    assert exc.value.line == 3 and exc.value.source == str(p)


def test_size_is_checked_before_reading(tmp_path, monkeypatch):
    p = tmp_path / "huge.guids"
    p.write_text("0x1\n" * 100)
    monkeypatch.setattr(guid_files, "MAX_GUID_FILE_BYTES", 64)

    def no_read(*args, **kwargs):
        raise AssertionError("read before the size check")

    monkeypatch.setattr("fabric_engine.formats._input.read_bytes", no_read)
    with pytest.raises(FormatError, match="at most 64"):
        read_guids(p)


def test_missing_file_and_binary(tmp_path):
    with pytest.raises(FormatError, match="cannot read"):
        read_guids(tmp_path / "nope.guids")
    p = tmp_path / "bin.guids"
    p.write_bytes(b"0x1\n\x00\x01")
    with pytest.raises(FormatError, match="binary"):
        read_guids(p)


def test_write_then_read(tmp_path):
    p = write_guids(tmp_path / "r.guids", [1, 0xFFFFFFFFFFFFFFFF], "two\nlines")
    assert p.read_text().splitlines()[:2] == ["# two", "# lines"]
    assert read_guids(p) == [1, 0xFFFFFFFFFFFFFFFF]
