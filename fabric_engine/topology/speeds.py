"""Link widths, lane speeds and the data rate they carry.

Data rate per lane = signalling rate x encoding efficiency. Signalling rates and
encodings are those of the InfiniBand Architecture Specification Vol. 2 (Release
1.3.1 and later, PortInfo LinkSpeedActive / LinkSpeedExtActive) as summarised in
the InfiniBand Trade Association roadmap:

=======  ===================  ==========  ====================  ================
speed    signalling (Gbaud)    encoding    data rate / lane      4x data rate
=======  ===================  ==========  ====================  ================
SDR      2.5                  8b/10b      2.0 Gb/s              8 Gb/s
DDR      5.0                  8b/10b      4.0 Gb/s              16 Gb/s
QDR      10.0                 8b/10b      8.0 Gb/s              32 Gb/s
FDR10    10.3125              64b/66b     10.0 Gb/s             40 Gb/s
FDR      14.0625              64b/66b     13.64 Gb/s            54.5 Gb/s
EDR      25.78125             64b/66b     25.0 Gb/s             100 Gb/s
HDR      53.125 (PAM4)        64b/66b     51.56 Gb/s (nominal 50)  200 Gb/s
NDR      106.25 (PAM4)        64b/66b     103.1 Gb/s (nominal 100) 400 Gb/s
XDR      212.5 (PAM4)         64b/66b     206.2 Gb/s (nominal 200) 800 Gb/s
=======  ===================  ==========  ====================  ================

From HDR on, the lane carries FEC overhead on top of 64b/66b; the usable data rate
is the nominal one the industry quotes (50/100/200 Gb/s per lane), which is what
we use as capacity. Up to FDR the data rate is signalling x encoding.
"""

from __future__ import annotations

import numpy as np

__all__ = ["SPEEDS", "WIDTHS", "speed_code", "lane_data_rate_gbps", "capacity_gbps"]

#: Lane speed names in order of their code (index into the tables below).
SPEEDS: tuple[str, ...] = ("SDR", "DDR", "QDR", "FDR10", "FDR", "EDR", "HDR", "NDR", "XDR")
#: Valid link widths in lanes.
WIDTHS: tuple[int, ...] = (1, 2, 4, 8, 12)

_SIGNALLING_GBAUD = np.array([2.5, 5.0, 10.0, 10.3125, 14.0625, 25.78125, 53.125, 106.25, 212.5])
_ENCODING = np.array([0.8, 0.8, 0.8, 64 / 66, 64 / 66, 64 / 66, 64 / 66, 64 / 66, 64 / 66])
# Usable data rate per lane in Gb/s (see module docstring for HDR and up).
_LANE_DATA_GBPS = np.where(
    np.arange(len(SPEEDS)) >= SPEEDS.index("HDR"),
    np.array([0, 0, 0, 0, 0, 0, 50.0, 100.0, 200.0]),
    np.round(_SIGNALLING_GBAUD * _ENCODING, 2),
)
_LANE_DATA_GBPS[SPEEDS.index("FDR10")] = 10.0
_CODES = {name: i for i, name in enumerate(SPEEDS)}


def speed_code(name: str) -> int:
    """Code of a lane speed name (``"NDR"`` -> 7). Raises ``KeyError`` for unknown names."""
    return _CODES[name.upper()]


def lane_data_rate_gbps(code: np.ndarray | int) -> np.ndarray | float:
    """Usable data rate of one lane in Gb/s for speed code(s)."""
    return _LANE_DATA_GBPS[code]


def capacity_gbps(width: np.ndarray | int, code: np.ndarray | int) -> np.ndarray | float:
    """Data-rate capacity of a link of ``width`` lanes at speed ``code``, in Gb/s.

    >>> float(capacity_gbps(4, speed_code("NDR")))
    400.0
    >>> float(capacity_gbps(4, speed_code("QDR")))
    32.0
    """
    return np.asarray(width) * _LANE_DATA_GBPS[code]
