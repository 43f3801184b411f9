"""Gzip-compressed and binary inputs, for every fabric format (issue 16)."""

from __future__ import annotations

import gzip

import numpy as np
import pytest

from fabric_engine import formats
from fabric_engine.errors import FormatError
from fabric_engine.formats._input import gunzip, to_text
from fabric_engine.topology.generate import fat_tree


@pytest.mark.parametrize("fmt", formats.WRITABLE)
def test_gzip_files_and_bytes_read_like_plain_ones(tmp_path, fmt):
    f = fat_tree(hosts=16, radix=8, speed="HDR")
    text = formats.write(f, fmt)
    path = tmp_path / f"fabric.{fmt}.gz"
    path.write_bytes(gzip.compress(text.encode()))
    for got in (formats.read(path), formats.read(path.read_bytes(), source="upload.gz")):
        assert got.num_hosts == 16 and np.array_equal(got.guid, formats.read(text).guid)


def test_format_is_told_by_content_or_by_the_name_under_gz():
    assert formats.format_from_name("fabric.net.gz") == "ibsim"
    assert formats.format_from_name("FABRIC.JSON.GZ") == "json"


def test_concatenated_members_and_the_decompressed_size_cap():
    assert to_text(gzip.compress(b"a\n") + gzip.compress(b"b\n"), "x") == "a\nb\n"
    with pytest.raises(FormatError, match="more than 1,000 bytes once decompressed"):
        gunzip(gzip.compress(b"0" * 5000), "bomb.gz", max_bytes=1000)
    with pytest.raises(FormatError, match="trailing bytes"):
        to_text(gzip.compress(b"a") + b"junk", "x.gz")


def test_binary_data_is_refused_with_its_line():
    with pytest.raises(FormatError, match="binary data") as exc:
        formats.read(b"Switch 8\nx\x00y\n", source="f.ibnd")
    assert (exc.value.source, exc.value.line) == ("f.ibnd", 2)
    with pytest.raises(FormatError, match="corrupt gzip"):
        formats.read(b"\x1f\x8b\x08\x00" + b"\xff" * 40, source="f.gz")
