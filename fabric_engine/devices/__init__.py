"""Device health: switch vitals (unmanaged ones included), host adapter ports, ibdiagnet's node records, SM errors.

Readers, one per tool, each returning the records of :mod:`.vitals` and appending the lines it skipped to a list
(``{line, text, reason}``; terminal-capture noise as :mod:`fabric_engine.captured` defines it):

* :mod:`.ibswinfo` - ``ibswinfo`` (stanford-rc), full and ``-o`` outputs: :class:`~.vitals.DeviceVitals`;
* :mod:`.ibdiagnet_db` - ``ibdiagnet2.db_csv`` sections TEMP_SENSING, NODES_INFO, FEC_MODE, WARNINGS_*, ERRORS_*;
* :mod:`.nodes_info` - ``ibdiagnet2.nodes_info``: :class:`~.vitals.NodeInfo`;
* :mod:`.ibstat`, :mod:`.ibv_devinfo` - host adapter ports: :class:`~.vitals.HcaPort`;
* :mod:`.opensm_errors` - the ``ERR XXXX`` entries of an OpenSM log: :class:`~.vitals.OpensmError`.

:func:`read_devices` tells them apart by content; :func:`summary` counts fans, power supplies and firmware
versions per device type.
"""

from __future__ import annotations

from .readings import KINDS, detect, read_devices, read_text, summary
from .vitals import (
    DeviceReadings,
    DeviceVitals,
    FabricWarning,
    Fan,
    FecModes,
    HcaPort,
    NodeInfo,
    OpensmError,
    Psu,
    Temperature,
)

__all__ = ["KINDS", "detect", "read_devices", "read_text", "summary", "DeviceReadings", "DeviceVitals", "Fan", "Psu",
           "Temperature", "HcaPort", "NodeInfo", "FecModes", "FabricWarning", "OpensmError"]
