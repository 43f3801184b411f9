"""Read ``ibstat`` output (rdma-core ``infiniband-diags/ibstat.c``): the ports of a host's channel adapters.

``ca_dump`` prints ``CA '<name>'``, then tab-indented ``CA type: <type>``, ``Number of ports``, ``Firmware
version``, ``Hardware version``, ``Node GUID: 0x%016x``, ``System image GUID``; ``port_dump`` prints per port
``Port <n>:`` and, indented once more, ``State`` (``Down``, ``Initializing``, ``Armed``, ``Active``),
``Physical state`` (``Sleep``, ``Polling``, ``Disabled``, ``PortConfigurationTraining``, ``LinkUp``,
``LinkErrorRecovery``, ``PhyTest``), ``Rate`` (Gb/s: ``%d``, ``2.5`` for 1x SDR, ``%d (FDR10)``), ``Base lid``,
``LMC``, ``SM lid``, ``Capability mask``, ``Port GUID``, ``Link layer``. ``ibstat <ca> <port>`` prints
``CA: '<name>'`` and the port without indentation. ibstat prints neither width nor lane speed: they are
``None`` (``FDR10`` is the speed where the rate says it). A port is named ``<host>/<CA>`` when the capture's shell
prompt names the host (``[root@gpu0042 ~]#``), else by its CA. Terminal noise is skipped with a warning (captured
output, :mod:`fabric_engine.captured`); a port line outside a CA, a value out of range name the file and line.
"""

from __future__ import annotations

import re

from ..errors import FormatError
from ._adapters import Scan, scan
from ._text import MAX_FIELD_CHARS, firmware, float_of, guid_of, int_of
from .vitals import HcaPort

__all__ = ["read", "looks_like", "MAX_PORTS"]

#: Most ports read from one capture (a host has a few adapters of one or two ports).
MAX_PORTS = 4096
_CA = re.compile(r"(?:CA|Switch|Router|iWARP RNIC|\?\?\?):? '([^']{1,64})'")
_PORT = re.compile(r"Port (\d{1,3}):")
_FIELD = re.compile(r"([A-Za-z][A-Za-z ]{1,30}): (.*)")
_STATES = ("Down", "Initializing", "Armed", "Active", "???")
_PHYS = ("No state change", "Sleep", "Polling", "Disabled", "PortConfigurationTraining", "LinkUp",
         "LinkErrorRecovery", "PhyTest", "???")
_CA_FIELDS = {"CA type", "Switch type", "Router type", "Number of ports", "Firmware version", "Hardware version",
              "Node GUID", "System image GUID"}
_PORT_FIELDS = {"State", "Physical state", "Rate", "Base lid", "LMC", "SM lid", "Capability mask", "Port GUID",
                "Link layer"}


def looks_like(text: str) -> bool:
    """Whether ``text`` is ibstat output (a CA header, then its fields or a port's)."""
    return re.search(r"^(?:CA|Switch):? '[^']+'\r?\n\s*(?:CA type|Switch type|Port \d+):", text[:1 << 16],
                     re.M) is not None


def _line(st: Scan, lineno: int, ln: str, s: str) -> bool:
    """One line of ibstat's grammar read into ``st`` (False: not one)."""
    m = _CA.fullmatch(s)
    if m is not None and not ln[0].isspace():
        st.open(m.group(1))
        return True
    if st.adapter is None:
        return False
    m = _PORT.fullmatch(s)
    if m is not None:
        st.port(m.group(1), lineno)
        return True
    m = _FIELD.fullmatch(s)
    if m is None:
        return False
    key = m.group(1)
    value = st.value(key, m.group(2), lineno)
    if key in _PORT_FIELDS and st.in_port():
        st.port_field(key, value, lineno)
        return True
    if key in _CA_FIELDS:
        st.adapter[key] = (value, lineno)
        return True
    return False


def read(text: str, source: str = "ibstat", warnings: list | None = None,
         types: dict[str, str] | None = None) -> list[HcaPort]:
    """The ports of ibstat output (one or more adapters, one or more captures); ``types`` (if given) gets each
    adapter's CA type (``MT4129``) by the ports' ``node``."""
    ports = scan(text, source, "ibstat", warnings, MAX_PORTS, _line, indented_inside=True)
    if types is not None:
        types.update((n, c["CA type"][0][:MAX_FIELD_CHARS]) for _, n, c, _ in ports if c.get("CA type", ("",))[0])
    return [_port(line, n, c, f, source) for line, n, c, f in ports]


def _port(line: int, name: str, ca: dict, f: dict[str, tuple[str, int]], source: str) -> HcaPort:
    number = int_of(f["#"][0], source, line, "port", 255)
    for key in ("State", "Physical state"):
        if key not in f:
            raise FormatError(source, line, f"Port {number} without {key}: truncated output?")
    state, sl = f["State"]
    phys, pl = f["Physical state"]
    if state not in _STATES:
        raise FormatError(source, sl, f"State {state[:40]!r}: ibstat prints one of {', '.join(_STATES[:4])}")
    if phys not in _PHYS:
        raise FormatError(source, pl, f"Physical state {phys[:40]!r} is not one ibstat prints")
    rate, speed = None, None
    if "Rate" in f:
        value, rl = f["Rate"]
        text, fdr10 = (value[:-8].strip(), True) if value.endswith("(FDR10)") else (value, False)
        rate = float_of(text, source, rl, "Rate", 0, 100_000)
        speed = "FDR10" if fdr10 else None
    guid = None
    if "Node GUID" in ca:
        guid = guid_of(ca["Node GUID"][0], source, ca["Node GUID"][1])
    fw = firmware(ca["Firmware version"][0]) if ca.get("Firmware version", ("",))[0] else None
    return HcaPort(name, guid, number, state, phys, rate, None, speed, fw, f"{source}:{line}")
