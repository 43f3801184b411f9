"""A site's link-health thresholds (IBWEB_HEALTH_THRESHOLDS): tried before the repository's rows by the engine's
grading; a file that does not read stops the start, naming the file and the row."""

from __future__ import annotations

import pytest
from django.core.exceptions import ImproperlyConfigured

from ibweb.live.apps import _check_health_thresholds
from ibweb.live.engine.health_publisher import site_thresholds

SITE = """
[[ber]]
speed = "NDR"
fec = "*"
cable = "aoc"
measure = "raw"
normal = 1e-9
warning = 1e-8
error = 1e-7
min_window_s = 60
source = "our site's burn-in limit"
"""


def test_the_engine_grades_with_the_sites_rows_first(settings, tmp_path):
    site = tmp_path / "thresholds.toml"
    site.write_text(SITE)
    settings.IBWEB_HEALTH_THRESHOLDS = str(site)
    _check_health_thresholds()
    th = site_thresholds()
    assert th.files[0] == str(site) and th.ber[0]["source"] == "our site's burn-in limit"
    settings.IBWEB_HEALTH_THRESHOLDS = None
    assert str(site) not in site_thresholds().files


@pytest.mark.parametrize("text, said", [("[[ber]]\nspeed = 'NDR'\n", "[[ber]] row 1"), (None, "No such file")])
def test_a_site_table_that_does_not_read_stops_the_start(settings, tmp_path, text, said):
    site = tmp_path / "thresholds.toml"
    if text is not None:
        site.write_text(text)
    settings.IBWEB_HEALTH_THRESHOLDS = str(site)
    with pytest.raises(ImproperlyConfigured, match="IBWEB_HEALTH_THRESHOLDS") as err:
        _check_health_thresholds()
    assert said in str(err.value) and (text is None or str(site) in str(err.value))
