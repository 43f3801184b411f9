"""Signals the fabric runner sends, for apps that store what happened (an events log, notifications).

Receivers run in a worker thread of the engine process (they may use the database);
one that raises is logged and does not stop the runner.
"""

from django.dispatch import Signal

#: Alerts that appeared or went away since the previous tick of a fabric. Arguments:
#: ``fabric_id``, ``seq``, ``t`` (the tick's time), ``raised`` and ``cleared`` (lists of
#: alert dicts as the feed carries them: ``kind``, ``severity``, ``message``, ...). Topology
#: and routing changes of telemetry-fed fabrics come as alerts too (``link_down``,
#: ``node_vanished``, ``routing``, ``discovery``, ...). ``first`` is true on a runner's first
#: tick (sent even when nothing is raised): ``raised`` are then all its alerts, and an alert
#: a receiver still holds open from an earlier runner is over.
fabric_alerts = Signal()

#: Alert kinds whose every alert is its own occurrence (a routing event: re-routed after a host vanished, then
#: after it came back; a down longer than the job-killing time, one per episode), told apart by when it was made
#: (``t``) and its message; a cable swap, one per changed module serial: the runner's raised/cleared diff and the
#: events store key them so.
ONE_SHOT_KINDS = frozenset({"routing", "link_down_long", "cable_swap"})

#: A frame was published (every tick of a fabric's leader): ``fabric_id``, ``frame`` (its header as the
#: ``ALL`` view sees it: ``seq``, ``t``, ``totals``, ``jobs``, ``alerts``, ``hotspots``, ... without the
#: per-link arrays) and ``fabric`` (the engine :class:`~fabric_engine.topology.Fabric`). Receivers run one at a
#: time: while one still runs, the next frames are not sent (keep them quick, e.g. batch database writes). A frame
#: is sent after the :data:`fabric_alerts` of its tick and those before have been handled.
frame_published = Signal()

#: A fabric's engine published a (new) topology: ``fabric_id``, ``version`` (of the runtime
#: record), ``hosts``, ``switches``, ``links``.
topology_published = Signal()
