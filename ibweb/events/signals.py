"""What the events app tells other apps (notifications): stored events that opened or closed."""

from django.dispatch import Signal

#: Events of a fabric were opened (or reopened) or closed, after their transaction committed. Arguments:
#: ``fabric_id``, ``opened`` and ``closed`` (lists of :class:`~ibweb.events.models.Event` primary keys).
#: Sent by :class:`ibweb.events.recorder.EventRecorder` (with ``send_robust``: a receiver that raises is logged
#: and never stops the recorder) and by apps that store events of their own (``notify_channel_failing``).
events_changed = Signal()
