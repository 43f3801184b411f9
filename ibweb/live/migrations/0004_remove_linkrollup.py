"""The one-minute rollups go (issue 40): their endpoints read the time-series store (:mod:`ibweb.tsdb`), which keeps
full resolution for 48 hours and longer; the table and its rows are dropped."""

from django.db import migrations


class Migration(migrations.Migration):

    dependencies = [
        ("live", "0003_rollup_coverage"),
    ]

    operations = [
        migrations.DeleteModel(name="LinkRollup"),
    ]
