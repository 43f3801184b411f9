"""What the device readers give: switch vitals, host adapter ports, ibdiagnet's node and port records, SM errors.

Every record names where it was read (``source``: ``file:line``). A value the tool did not print is ``None``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:  # the validation readers' records, kept here by the web side's store
    from ..validation.pkeys import PKeyTable
    from ..validation.sminfo import SmInfo

__all__ = ["Fan", "Psu", "Temperature", "DeviceVitals", "HcaPort", "NodeInfo", "FecModes", "FabricWarning",
           "OpensmError", "DeviceReadings", "IsolatedPort"]


@dataclass(frozen=True)
class Fan:
    """One fan (tachometer): its speed, and whether the device calls it good."""

    name: str
    rpm: int | None
    ok: bool


@dataclass(frozen=True)
class Psu:
    """One power supply: present and good (``ok``), its DC output good (``dc_ok``), the power it draws."""

    name: str
    ok: bool
    dc_ok: bool | None
    watts: float | None


@dataclass(frozen=True)
class Temperature:
    """One temperature sensor (the ASIC, a module): reading, highest seen, thresholds (degrees Celsius)."""

    sensor: str
    celsius: float | None
    max_celsius: float | None
    warning: float | None
    critical: float | None


@dataclass(frozen=True)
class DeviceVitals:
    """Identity, firmware, uptime, fans, power supplies and temperatures of one device; ``errors``: what it
    reported wrong (a fan, PSU or DC state in ERROR, the tool's own ``error:`` lines)."""

    guid: int | None
    name: str
    source: str
    part_number: str | None
    serial: str | None
    psid: str | None
    firmware: str | None
    hardware: str | None
    uptime_s: int | None
    fans: tuple[Fan, ...]
    psus: tuple[Psu, ...]
    temperatures: tuple[Temperature, ...]
    errors: tuple[str, ...]


@dataclass(frozen=True)
class HcaPort:
    """One port of a host channel adapter as ``ibstat`` or ``ibv_devinfo -v`` shows it."""

    node: str
    guid: int | None
    port: int
    state: str
    phys_state: str
    rate_gbps: float | None
    width: str | None
    speed: str | None
    firmware: str | None
    source: str


@dataclass(frozen=True)
class NodeInfo:
    """ibdiagnet's general info of one node (vendor-specific GeneralInfo MAD): hardware, firmware, PSID, uptime."""

    guid: int
    name: str
    device_id: int | None
    hardware: str | None
    firmware: str | None
    psid: str | None
    uptime_s: int | None
    source: str


@dataclass(frozen=True)
class FecModes:
    """The rows of one ``FEC_MODE`` section, a column per field (one row per port; a fabric has 200,000):
    ``guid`` (node GUID), ``port``, ``active`` (the active FEC's name, ``""`` where not given), ``line`` (of the
    row in ``source``) and ``fields``: every other column as printed, by its header name."""

    guid: np.ndarray
    port: np.ndarray
    active: np.ndarray
    line: np.ndarray
    fields: dict[str, np.ndarray]
    source: str

    def __len__(self) -> int:
        return int(self.guid.size)


@dataclass(frozen=True)
class FabricWarning:
    """One row of an ibdiagnet ``WARNINGS_<CHECK>`` (or ``ERRORS_<CHECK>``) section."""

    severity: str
    check: str
    scope: str
    guid: int | None
    port: int | None
    event: str
    summary: str
    source: str


@dataclass(frozen=True)
class OpensmError:
    """One OpenSM log entry carrying an ``ERR XXXX`` code: its time (epoch seconds), code and text."""

    t: float
    code: str
    text: str
    source: str


@dataclass(frozen=True)
class IsolatedPort:
    """A port seen administratively disabled (physical state ``Disabled``): taken out of service, by an operator
    or an isolation plugin. ``guid``: its node's GUID (a CA's as its port lines name it), ``t``: when it was
    first seen so (epoch seconds), ``source``: what showed it (``file:line`` or the command)."""

    guid: int
    port: int
    t: float
    node: str
    source: str


@dataclass
class DeviceReadings:
    """Everything :func:`fabric_engine.devices.read_devices` read, per kind. ``warnings``: ibdiagnet's own
    warnings and errors; ``adapter_types``: the device type of each host adapter (``MT4129``) by its ports'
    ``node``; ``skipped``: the lines the readers skipped (``{line, text, reason, source}``);
    ``files``: each input, its kind and how many records it gave. ``sms`` and ``pkeys``: what ``sminfo`` and
    ``smpquery pkeys`` gave (:class:`~fabric_engine.validation.sminfo.SmInfo`,
    :class:`~fabric_engine.validation.pkeys.PKeyTable`), filled by a collector, not by the device readers;
    ``read_at``: when each list was last read or written (epoch seconds, by list name: ``"sms"``, ``"vitals"``...);
    ``isolated``: the ports seen administratively disabled (:class:`IsolatedPort`), kept by the web side's store."""

    vitals: list[DeviceVitals] = field(default_factory=list)
    hca_ports: list[HcaPort] = field(default_factory=list)
    nodes_info: list[NodeInfo] = field(default_factory=list)
    fec_modes: list[FecModes] = field(default_factory=list)
    warnings: list[FabricWarning] = field(default_factory=list)
    opensm_errors: list[OpensmError] = field(default_factory=list)
    adapter_types: dict[str, str] = field(default_factory=dict)
    files: list[dict] = field(default_factory=list)
    skipped: list[dict] = field(default_factory=list)
    sms: list[SmInfo] = field(default_factory=list)
    pkeys: list[PKeyTable] = field(default_factory=list)
    read_at: dict[str, float] = field(default_factory=dict)
    isolated: list[IsolatedPort] = field(default_factory=list)
