"""The History page of a fabric (issue 40): linked from the fabric's navigation, carrying the stored series'
catalog for the browser, shown only for a fabric the visitor may see."""
# ruff: noqa: F811  (pytest fixtures imported from tenancy_fixtures are redefined as test arguments)

import json
import re

import pytest

from ibweb.dashboard.history_page import series_catalog
from ibweb.tsdb.series import SERIES
from tests.support.access_fixtures import public_read
from tests.support.tenancy_fixtures import fabric  # noqa: F401

pytestmark = pytest.mark.django_db


def test_the_page_carries_the_series_catalog_and_mounts_the_history_module(client, fabric):
    with public_read(True):
        body = client.get(f"/fabrics/{fabric.slug}/history/").content.decode()
    assert f'data-page="history" data-fabric="{fabric.slug}"' in body
    assert "/static/ibweb/ibweb-pages.js" in body
    script = re.search(r'<script id="history-series" type="application/json">(.*?)</script>', body)
    catalog = json.loads(script.group(1))
    assert catalog == series_catalog()
    assert [c["name"] for c in catalog] == list(SERIES)
    assert {"name": "utilization", "unit": "ratio", "agg": "mean"} in catalog
    assert any(c["name"].startswith("error_") for c in catalog), "the error counters' rates are offered"


def test_the_fabric_navigation_links_the_history_page(client, fabric):
    with public_read(True):
        live = client.get(f"/fabrics/{fabric.slug}/").content.decode()
        history = client.get(f"/fabrics/{fabric.slug}/history/").content.decode()
    assert f'<a href="/fabrics/{fabric.slug}/history/">History</a>' in live
    assert f'<a href="/fabrics/{fabric.slug}/history/" aria-current="page">History</a>' in history


def test_an_unknown_fabric_is_404_and_an_anonymous_visitor_signs_in_without_public_read(client, fabric):
    with public_read(True):
        assert client.get("/fabrics/no-such-fabric/history/").status_code == 404
    with public_read(False):
        answer = client.get(f"/fabrics/{fabric.slug}/history/")
    assert answer.status_code == 302 and "/accounts/login/" in answer.url
