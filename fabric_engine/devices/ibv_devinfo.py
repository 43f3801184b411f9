"""Read ``ibv_devinfo [-v]`` output (rdma-core ``libibverbs/examples/devinfo.c``): adapters and their ports.

``print_hca_cap`` prints ``hca_id:\\t<name>``, then one tab-indented ``<field>:<tabs><value>`` a line:
``transport``, ``fw_ver``, ``node_guid`` (``%04x:%04x:%04x:%04x``), ``sys_image_guid``, ``vendor_id``,
``vendor_part_id``, ``hw_ver``, ``board_id`` (the PSID), ``phys_port_cnt``; with ``-v`` the device limits and
capability lists follow (their flag lines indented further; not read). Per port ``\\t\\tport:\\t<n>`` and, one
tab deeper, ``state`` (``PORT_ACTIVE (4)``), ``max_mtu``, ``active_mtu``, ``sm_lid``, ``port_lid``,
``port_lmc``, ``link_layer``; with ``-v`` also ``active_width`` (``4X (2)``), ``active_speed`` (``100.0 Gbps
(128)``: ``speed_str`` of the IBTA speed code, the extended code when the port has one), ``effective_speed``
(newer versions) and ``phys_state`` (``LINK_UP (5)``). States are read by the number in parentheses and named
as ``ibstat`` names them (``Active``, ``LinkUp``); the rate is ``effective_speed`` where printed, else the
lanes times the lane's nominal speed. A port is named ``<host>/<hca_id>`` when the capture's shell prompt
names the host. Terminal noise is skipped with a warning; a line outside an adapter that is not noise, a
value out of range name the file and line.
"""

from __future__ import annotations

import re

from ..errors import FormatError
from ._adapters import Scan, scan
from ._text import device_type, firmware, float_of, guid_of, int_of
from .vitals import HcaPort

__all__ = ["read", "looks_like", "MAX_PORTS", "SPEEDS"]

MAX_PORTS = 4096
#: IBTA speed code (``ibv_port_attr.active_speed``/``active_speed_ex``) -> (name, nominal lane Gb/s).
SPEEDS = {1: ("SDR", 2.5), 2: ("DDR", 5.0), 4: ("QDR", 10.0), 8: ("FDR10", 10.0), 16: ("FDR", 14.0),
          32: ("EDR", 25.0), 64: ("HDR", 50.0), 128: ("NDR", 100.0), 256: ("XDR", 200.0)}
_WIDTHS = {"1": 1, "2": 2, "4": 4, "8": 8, "12": 12}
_STATES = {1: "Down", 2: "Initializing", 3: "Armed", 4: "Active"}
_PHYS = {1: "Sleep", 2: "Polling", 3: "Disabled", 4: "PortConfigurationTraining", 5: "LinkUp",
         6: "LinkErrorRecovery", 7: "PhyTest"}
_FIELD = re.compile(r"([A-Za-z_][\w ]{0,40}):\s*(.*)")
_CODED = re.compile(r"(.*?)\s*\((\d{1,5})\)")


def looks_like(text: str) -> bool:
    """Whether ``text`` is ibv_devinfo output (an ``hca_id:`` line followed by its fields)."""
    return re.search(r"^hca_id:\t\S+\r?\n\ttransport:", text[:1 << 16], re.M) is not None


def _line(st: Scan, lineno: int, ln: str, s: str) -> bool:
    """One line of ibv_devinfo's grammar read into ``st`` (False: not one)."""
    if ln.startswith("hca_id:"):
        hca = s[7:].strip()
        if not hca or len(hca) > 64:
            raise FormatError(st.source, lineno, "hca_id without a device name")
        st.open(hca)
        return True
    if st.adapter is None or ln[0] != "\t":
        return False
    m = _FIELD.fullmatch(s)
    if m is None:
        return True  # a capability flag line of -v
    key = m.group(1)
    value = st.value(key, m.group(2), lineno)
    if key == "port" and ln.startswith("\t\tport:"):
        st.port(value, lineno)
    elif ln.startswith("\t\t\t") and st.in_port():
        st.port_field(key, value, lineno)
    elif not ln.startswith("\t\t"):
        st.adapter[key] = (value, lineno)
    return True


def read(text: str, source: str = "ibv_devinfo", warnings: list | None = None,
         types: dict[str, str] | None = None) -> list[HcaPort]:
    """The ports of ibv_devinfo output (one or more adapters and captures); ``types`` (if given) gets each
    adapter's device type (``MT`` and its ``vendor_part_id``, as ibstat's CA type) by the ports' ``node``."""
    ports = scan(text, source, "ibv_devinfo", warnings, MAX_PORTS, _line)
    if types is not None:
        for _, n, d, _ in ports:
            if "vendor_part_id" in d:
                types[n] = device_type(int_of(d["vendor_part_id"][0], source, d["vendor_part_id"][1],
                                              "vendor_part_id", 0xFFFF))
    return [_port(line, n, d, f, source) for line, n, d, f in ports]


def _coded(f: dict[str, tuple[str, int]], key: str, table: dict[int, str], source: str) -> str:
    if key not in f:
        return ""
    value, line = f[key]
    m = _CODED.fullmatch(value)
    if m is None or int(m.group(2)) not in table:
        raise FormatError(source, line, f"{key} {value[:40]!r}: not one ibv_devinfo prints (name and code)")
    return table[int(m.group(2))]


def _port(line: int, name: str, dev: dict, f: dict[str, tuple[str, int]], source: str) -> HcaPort:
    number = int_of(f["#"][0], source, line, "port", 255)
    state = _coded(f, "state", _STATES, source)
    phys = _coded(f, "phys_state", _PHYS, source)
    width = speed = None
    lanes = lane_gbps = None
    if "active_width" in f:
        value, wl = f["active_width"]
        m = re.fullmatch(r"(\d{1,2})X\s*\((\d{1,3})\)", value)
        if m is None or m.group(1) not in _WIDTHS:
            raise FormatError(source, wl, f"active_width {value[:40]!r}: not a link width (1X, 2X, 4X, 8X, 12X)")
        lanes = _WIDTHS[m.group(1)]
        width = f"{lanes}x"
    if "active_speed" in f:
        value, sl = f["active_speed"]
        m = _CODED.fullmatch(value)
        if m is None or int(m.group(2)) not in SPEEDS:
            raise FormatError(source, sl, f"active_speed {value[:40]!r}: not an IB lane speed")
        speed, lane_gbps = SPEEDS[int(m.group(2))]
    rate = None
    if "effective_speed" in f:
        value, el = f["effective_speed"]
        rate = float_of(value.removesuffix("Gbps").strip(), source, el, "effective_speed", 0, 100_000)
    elif lanes and lane_gbps:
        rate = lanes * lane_gbps
    guid = guid_of(dev["node_guid"][0], source, dev["node_guid"][1]) if "node_guid" in dev else None
    fw = firmware(dev["fw_ver"][0]) if dev.get("fw_ver", ("",))[0] else None
    return HcaPort(name, guid, number, state, phys, rate, width, speed, fw, f"{source}:{line}")
