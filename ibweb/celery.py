"""The Celery application; tasks live in each app's ``tasks.py``."""

import os

from celery import Celery
from celery.schedules import crontab

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "ibweb.settings")

app = Celery("ibweb")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()


@app.on_after_configure.connect
def notify_digest_schedule(sender, **kwargs) -> None:
    """Beat's ``notify-digest``: the daily digest of what changed in the fabrics' health (issue 38;
    ibweb.notify.digest) at 5 past its hour (``IBWEB_NOTIFY_DIGEST_HOUR``, UTC); sent once a day whatever calls it
    (the notify pump catches up one missed)."""
    sender.add_periodic_task(crontab(minute=5, hour=os.environ.get("IBWEB_NOTIFY_DIGEST_HOUR", "7")),
                             sender.signature("ibweb.notify.tasks.daily_digest"), name="notify-digest")
