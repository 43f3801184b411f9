"""The settings pick the backend: empty URL the embedded file, an http(s) URL VictoriaMetrics."""

from __future__ import annotations

import pytest
from django.conf import settings

from ibweb.tsdb.embedded import EmbeddedStore
from ibweb.tsdb.open import open_store
from ibweb.tsdb.victoria import VictoriaStore


def test_settings_default_to_the_embedded_file():
    assert settings.IBWEB_TSDB_URL == "" and settings.IBWEB_TSDB_RETENTION_DAYS == 90
    assert settings.IBWEB_TSDB_PATH.name == "tsdb.sqlite3"


def test_open_store_by_url(tmp_path):
    embedded = open_store("", retention_days=30, path=tmp_path / "t.sqlite3")
    try:
        assert isinstance(embedded, EmbeddedStore) and embedded.tiers[-1].keep == 30 * 86400
    finally:
        embedded.close()
    assert isinstance(open_store("http://vm:8428/"), VictoriaStore)
    with pytest.raises(ValueError, match="IBWEB_TSDB_URL='redis://x'"):
        open_store("redis://x")
    with pytest.raises(ValueError, match="no file path"):
        open_store("")
