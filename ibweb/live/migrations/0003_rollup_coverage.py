"""Rollups say what the minute knows (issue 35): ``coverage_s`` seconds measured, ``down_s`` seconds down,
means over the covered seconds (None when there are none).

Rows stored before counted one-second ticks with data: their coverage is their ``samples`` seconds, never down.
"""

from django.db import migrations, models
from django.db.models import F


def covered_by_samples(apps, schema_editor):
    apps.get_model("live", "LinkRollup").objects.update(coverage_s=F("samples"))


class Migration(migrations.Migration):

    dependencies = [
        ("live", "0002_rollup_identity"),
    ]

    operations = [
        migrations.AddField(
            model_name="linkrollup", name="coverage_s",
            field=models.FloatField(default=0.0, help_text="Seconds of the minute with a measurement."),
        ),
        migrations.AddField(
            model_name="linkrollup", name="down_s",
            field=models.FloatField(default=0.0, help_text="Seconds of the minute the link was down."),
        ),
        migrations.AlterField(
            model_name="linkrollup", name="mean_util",
            field=models.FloatField(null=True, help_text="Mean utilization over the covered seconds."),
        ),
        migrations.AlterField(
            model_name="linkrollup", name="max_util",
            field=models.FloatField(null=True, help_text="Peak utilization over the covered seconds."),
        ),
        migrations.AlterField(
            model_name="linkrollup", name="mean_rate_gbps",
            field=models.FloatField(null=True, help_text="Mean rate (Gb/s) over the covered seconds."),
        ),
        migrations.AlterField(
            model_name="linkrollup", name="samples",
            field=models.PositiveIntegerField(help_text="Ticks with a measurement."),
        ),
        migrations.RunPython(covered_by_samples, migrations.RunPython.noop),
    ]
