import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):

    initial = True

    dependencies = [
        ("fabrics", "0001_initial"),
    ]

    operations = [
        migrations.CreateModel(
            name="LinkRollup",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("minute", models.DateTimeField(help_text="Start of the minute (UTC).")),
                ("link", models.IntegerField(help_text="Directed link index; -1 for the fabric-wide row.")),
                ("mean_util", models.FloatField()),
                ("max_util", models.FloatField()),
                ("mean_rate_gbps", models.FloatField()),
                ("samples", models.PositiveIntegerField()),
                ("fabric", models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name="rollups",
                                             to="fabrics.fabric")),
            ],
            options={
                "ordering": ["minute", "link"],
                "indexes": [models.Index(fields=["fabric", "link", "minute"], name="live_rollup_series")],
                "constraints": [models.UniqueConstraint(fields=("fabric", "minute", "link"),
                                                        name="live_rollup_unique")],
            },
        ),
    ]
