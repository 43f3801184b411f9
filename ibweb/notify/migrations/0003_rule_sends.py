from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [("notify", "0002_roles")]

    operations = [
        migrations.AddField(
            model_name="rule",
            name="sends",
            field=models.CharField(
                choices=[("events", "events"), ("digest", "digest"), ("both", "both")], default="events",
                help_text="events: each event as it starts and clears; digest: the daily digest of what changed "
                          "(ibweb.notify.digest); both.",
                max_length=8),
        ),
        migrations.AlterField(
            model_name="delivery",
            name="reason",
            field=models.CharField(help_text="start, clear, repeat, test or digest", max_length=8),
        ),
    ]
