"""Isolated ports kept in the database (issue 38): :class:`ibweb.live.validation.isolations.PortIsolation`."""

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('fabrics', '0010_fabric_policy_version'),
        ('live', '0004_remove_linkrollup'),
    ]

    operations = [
        migrations.CreateModel(
            name='PortIsolation',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('guid', models.BigIntegerField(help_text='Node GUID of the port (signed 64-bit).')),
                ('port', models.PositiveSmallIntegerField(help_text='Port number.')),
                ('node', models.CharField(blank=True, help_text="The node's name as the reading named it.", max_length=200)),
                ('isolated_at', models.DateTimeField(help_text='First seen disabled.')),
                ('last_seen_at', models.DateTimeField(help_text='Last seen disabled.')),
                ('enabled_at', models.DateTimeField(blank=True, help_text='Seen enabled again (None: still isolated).', null=True)),
                ('source', models.CharField(blank=True, help_text='What showed it disabled (file:line or command).', max_length=300)),
                ('fabric', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='port_isolations', to='fabrics.fabric')),
            ],
            options={
                'ordering': ['isolated_at', 'pk'],
                'indexes': [models.Index(fields=['fabric', 'guid', 'port'], name='live_isolation_port')],
                'constraints': [models.UniqueConstraint(condition=models.Q(('enabled_at__isnull', True)), fields=('fabric', 'guid', 'port'), name='live_isolation_open_unique')],
            },
        ),
    ]
