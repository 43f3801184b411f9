"""Rollups by link identity (transmitting and receiving node GUID and port), which survives cabling changes.

Rows stored before have no identity: they are left as they are (the API reads a link's rows by identity,
so they are no longer found under a link) and the retention deletes them within a day.
"""

from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ("live", "0001_initial"),
    ]

    operations = [
        migrations.RemoveConstraint(model_name="linkrollup", name="live_rollup_unique"),
        migrations.AddField(
            model_name="linkrollup", name="tx_guid",
            field=models.BigIntegerField(blank=True, null=True, help_text="Transmitting node GUID (signed 64-bit)."),
        ),
        migrations.AddField(
            model_name="linkrollup", name="tx_port",
            field=models.PositiveSmallIntegerField(blank=True, null=True, help_text="Transmitting port number."),
        ),
        migrations.AddField(
            model_name="linkrollup", name="rx_guid",
            field=models.BigIntegerField(blank=True, null=True, help_text="Receiving node GUID (signed 64-bit)."),
        ),
        migrations.AddField(
            model_name="linkrollup", name="rx_port",
            field=models.PositiveSmallIntegerField(blank=True, null=True, help_text="Receiving port number."),
        ),
        migrations.AddIndex(
            model_name="linkrollup",
            index=models.Index(fields=["fabric", "tx_guid", "tx_port", "minute"], name="live_rollup_port"),
        ),
        migrations.AddConstraint(
            model_name="linkrollup",
            constraint=models.UniqueConstraint(fields=("fabric", "minute", "link"),
                                               condition=models.Q(("tx_guid__isnull", True)),
                                               name="live_rollup_unique"),
        ),
        migrations.AddConstraint(
            model_name="linkrollup",
            constraint=models.UniqueConstraint(fields=("fabric", "minute", "tx_guid", "tx_port", "rx_guid", "rx_port"),
                                               condition=models.Q(("tx_guid__isnull", False)),
                                               name="live_rollup_identity_unique"),
        ),
    ]
