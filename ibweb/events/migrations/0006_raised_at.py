"""Open events are timed by wall time (``raised_at``), no longer by the engine's sequence number (``raised_seq``).

A sequence number starts again when the engine restarts without a shared cache, so counts made from it went
negative and the database refused the write. Each open event's stretch began at its ``last_seen`` (the
recorder sets both when it opens or reopens an event).
"""

from django.db import migrations, models
from django.db.models import F


def open_since_last_seen(apps, schema_editor):
    Event = apps.get_model("events", "Event")
    Event.objects.filter(active=True).update(raised_at=F("last_seen"))


class Migration(migrations.Migration):

    dependencies = [
        ('events', '0005_event_objects'),
    ]

    operations = [
        migrations.AddField(
            model_name='event',
            name='raised_at',
            field=models.DateTimeField(blank=True, help_text='Wall time of the tick that (re)opened it, while open.', null=True),
        ),
        migrations.RunPython(open_since_last_seen, migrations.RunPython.noop),
        migrations.RemoveField(
            model_name='event',
            name='raised_seq',
        ),
    ]
