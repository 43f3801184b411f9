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


def test_a_gzip_bomb_is_refused_by_its_ratio_after_the_first_megabyte():
    """Issue 26: checked as it inflates, so a bomb costs a megabyte of output, not its whole size."""
    bomb = gzip.compress(b"# a comment line of ibnetdiscover\n" * (1 << 20), 9)  # 34 MiB, about 1,000:1
    with pytest.raises(FormatError, match="expands more than 100-fold once decompressed") as exc:
        gunzip(bomb, "bomb.gz", max_ratio=100)
    assert exc.value.source == "bomb.gz"
    assert gunzip(bomb, "bomb.gz", max_ratio=1000).count(b"\n") > 0  # the ratio is what refused it
    small = gzip.compress(b"\n" * (512 << 10))  # 512 KiB of one byte: below the floor, accepted at any ratio
    assert len(to_text(small, "small.gz", max_ratio=2)) == 512 << 10
    text = formats.write(fat_tree(hosts=2048, radix=64), "ibnetdiscover").encode() * 2
    assert len(text) > 1 << 20 and gunzip(gzip.compress(text, 9), "real.gz", max_ratio=100) == text


def test_read_and_archives_keep_to_max_bytes(tmp_path):
    import io
    import tarfile

    text = formats.write(fat_tree(hosts=16, radix=8), "ibnetdiscover")
    with pytest.raises(FormatError, match="more than 1,000 bytes once decompressed"):
        formats.read(gzip.compress(text.encode()), source="f.gz", max_bytes=1000)
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tf:
        info = tarfile.TarInfo("ibdiagnet2/ibdiagnet2.log")  # not read, yet inflated to walk the archive
        info.size = 5000
        tf.addfile(info, io.BytesIO(b"x" * 5000))
    with pytest.raises(FormatError, match="members of more than 4,000 bytes in all"):
        formats.read(buf.getvalue(), source="run.tar.gz", max_bytes=4000)
