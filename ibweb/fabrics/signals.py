"""Signals of the fabrics app; other apps (the live feed) connect to them."""

from django.dispatch import Signal

#: Sent while an analysis runs: ``fabric_id`` and ``payload`` (a protocol-v1 ``progress`` body:
#: ``task``, ``id``, ``kind``, ``fraction``, ``status``, ``message``).
analysis_progress = Signal()
