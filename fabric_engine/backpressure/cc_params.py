"""InfiniBand congestion control settings (IBA Annex A10) as OpenSM configures them.

The fields are the ``cc_*`` options of ``opensm.conf`` (OpenSM man page, "Congestion Control OPTIONS"),
read and written by :mod:`fabric_engine.formats.opensm_cc`:

* switches (``SwitchCongestionSetting``): ``cc_sw_cong_setting_threshold`` (0 none, 1 loose .. 15 aggressive),
  ``..._marking_rate`` (mean number of packets between FECN marks), ``..._packet_size`` (in 64-byte credits:
  smaller packets are not marked), ``..._victim_mask`` (ports that mark also when they are only victims:
  held back by credits, not a root), ``..._credit_mask``, ``..._credit_starvation_threshold`` and
  ``..._return_delay``, ``..._control_map`` (which of those are valid);
* channel adapters (``CACongestionSetting``, per SL): ``cc_ca_cong_setting_ccti_timer`` (in 1.024 us: one CCTI
  decrement each time it expires), ``..._ccti_increase`` (added to the CCTI per BECN), ``..._trigger_threshold``,
  ``..._ccti_min``; ``cc_ca_cong_setting_control_map`` (the SLs configured), ``..._port_control``
  (0: per QP, 1: per SL and port);
* ``cc_cct``: the congestion control table, ``shift:multiplier`` entries; the CCTI indexes it, the entry is the
  source's injection rate delay (:meth:`CongestionControl.rate_steps`). ``CCTI_Limit`` is its last index.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, fields

import numpy as np

from ..errors import FabricEngineError

__all__ = ["CongestionControl", "CCTI_TIMER_UNIT_S", "N_SLS", "MAX_CCT_ENTRIES"]

#: The CCTI timer's unit (IBA A10: 1.024 microseconds).
CCTI_TIMER_UNIT_S = 1.024e-6
N_SLS = 16
#: CongestionControlTable: 128 blocks of 64 entries.
MAX_CCT_ENTRIES = 128 * 64


_PER_SL = ("ccti_timer", "ccti_increase", "trigger_threshold", "ccti_min")
_MASKS = ("victim_mask", "credit_mask")


def _int(value, where: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int | np.integer):
        raise FabricEngineError(f"{where}: {str(value)[:24]!r} is not an integer")
    return int(value)


def _pair(value, where: str) -> tuple[int, int]:
    if not isinstance(value, list | tuple) or len(value) != 2:
        raise FabricEngineError(f"{where}: write [shift, multiplier]")
    return _int(value[0], f"{where} shift"), _int(value[1], f"{where} multiplier")


def _sl16(values=0) -> tuple[int, ...]:
    return tuple([values] * N_SLS) if isinstance(values, int) else tuple(values)


@dataclass(frozen=True)
class CongestionControl:
    """One fabric's congestion control settings; ``enabled`` is OpenSM's ``congestion_control``.

    Per-SL fields are 16-tuples indexed by SL. ``cct`` is the table as ``(shift, multiplier)`` pairs.
    """

    enabled: bool = False
    sw_control_map: int = 0
    victim_mask: int = 0
    credit_mask: int = 0
    threshold: int = 0
    packet_size: int = 0
    cs_threshold: int = 0
    cs_return_delay: tuple[int, int] = (0, 0)
    marking_rate: int = 0
    ca_port_control: int = 0
    ca_control_map: int = 0
    ccti_timer: tuple[int, ...] = field(default_factory=_sl16)
    ccti_increase: tuple[int, ...] = field(default_factory=_sl16)
    trigger_threshold: tuple[int, ...] = field(default_factory=_sl16)
    ccti_min: tuple[int, ...] = field(default_factory=_sl16)
    cct: tuple[tuple[int, int], ...] = ()

    def validate(self, source: str = "congestion control") -> None:
        """Raise :class:`FabricEngineError` naming ``source`` and the field for a value out of its IBA range."""
        def check(name: str, value: int, hi: int) -> None:
            if not 0 <= int(value) <= hi:
                raise FabricEngineError(f"{source}: {name} {value} is out of range 0..{hi}")

        check("cc_sw_cong_setting_control_map", self.sw_control_map, 0x1F)
        check("cc_sw_cong_setting_victim_mask", self.victim_mask, (1 << 256) - 1)
        check("cc_sw_cong_setting_credit_mask", self.credit_mask, (1 << 256) - 1)
        check("cc_sw_cong_setting_threshold", self.threshold, 15)
        check("cc_sw_cong_setting_packet_size", self.packet_size, 255)
        check("cc_sw_cong_setting_credit_starvation_threshold", self.cs_threshold, 15)
        if len(self.cs_return_delay) != 2:
            raise FabricEngineError(f"{source}: cc_sw_cong_setting_credit_starvation_return_delay needs shift and "
                                    "multiplier")
        check("cc_sw_cong_setting_credit_starvation_return_delay shift", self.cs_return_delay[0], 3)
        check("cc_sw_cong_setting_credit_starvation_return_delay multiplier", self.cs_return_delay[1], 0x3FFF)
        check("cc_sw_cong_setting_marking_rate", self.marking_rate, 0xFFFF)
        check("cc_ca_cong_setting_port_control", self.ca_port_control, 0xFFFF)
        check("cc_ca_cong_setting_control_map", self.ca_control_map, 0xFFFF)
        for name, values, hi in (("ccti_timer", self.ccti_timer, 0xFFFF), ("ccti_increase", self.ccti_increase, 255),
                                 ("trigger_threshold", self.trigger_threshold, 255), ("ccti_min", self.ccti_min, 255)):
            if len(values) != N_SLS:
                raise FabricEngineError(f"{source}: cc_ca_cong_setting_{name} needs {N_SLS} SLs, has {len(values)}")
            for sl, v in enumerate(values):
                check(f"cc_ca_cong_setting_{name} of SL {sl}", v, hi)
        if len(self.cct) > MAX_CCT_ENTRIES:
            raise FabricEngineError(f"{source}: cc_cct has {len(self.cct)} entries, at most {MAX_CCT_ENTRIES}")
        for i, (shift, mult) in enumerate(self.cct):
            check(f"cc_cct entry {i} shift", shift, 3)
            check(f"cc_cct entry {i} multiplier", mult, 0x3FFF)

    @classmethod
    def from_dict(cls, data: dict, source: str = "congestion_control") -> CongestionControl:
        """The settings of a JSON-ready dict (:meth:`as_dict`'s form; missing fields keep their defaults), validated.

        Masks are hex strings (``"0x1f"``: 256 bits do not fit a JSON client's numbers) or integers, pairs
        (``cs_return_delay``, ``cct``'s entries) ``[shift, multiplier]``, per-SL fields lists of 16 integers.
        Raises :class:`FabricEngineError` naming ``source`` and the field for an unknown field, a value of the
        wrong form or out of range.
        """
        if not isinstance(data, dict):
            raise FabricEngineError(f"{source}: write a JSON object of congestion control settings")
        names = [f.name for f in fields(cls)]
        unknown = sorted(set(data) - set(names))
        if unknown:
            raise FabricEngineError(f"{source}: unknown setting {str(unknown[0])[:40]!r}; known: {', '.join(names)}")
        kw: dict = {}
        for key, value in data.items():
            where = f"{source}: {key}"
            if key == "enabled":
                if not isinstance(value, bool):
                    raise FabricEngineError(f"{where}: write true or false")
                kw[key] = value
            elif key in _MASKS and isinstance(value, str):
                try:
                    kw[key] = int(value, 16)
                except ValueError:
                    raise FabricEngineError(f"{where}: {value[:24]!r} is not hex") from None
            elif key == "cs_return_delay":
                kw[key] = _pair(value, where)
            elif key in _PER_SL:
                if not isinstance(value, list | tuple):
                    raise FabricEngineError(f"{where}: write a list of {N_SLS} values, one per SL")
                kw[key] = tuple(_int(v, f"{where} of SL {sl}") for sl, v in enumerate(value))
            elif key == "cct":
                if not isinstance(value, list | tuple):
                    raise FabricEngineError(f"{where}: write a list of [shift, multiplier]")
                if len(value) > MAX_CCT_ENTRIES:
                    raise FabricEngineError(f"{where}: {len(value)} entries, at most {MAX_CCT_ENTRIES}")
                kw[key] = tuple(_pair(v, f"{where} entry {i}") for i, v in enumerate(value))
            else:
                kw[key] = _int(value, where)
        cc = cls(**kw)
        cc.validate(source)
        return cc

    @classmethod
    def typical(cls) -> CongestionControl:
        """A working profile, for what-ifs where a fabric has none: on, switch threshold 8, every packet of a root
        marked (``marking_rate`` 0), ``ccti_increase`` 1 and ``ccti_timer`` 10 (10.24 us) on every SL, all SLs and
        switch settings valid, a 128-entry table ``(0, floor(7 i**2 / (95**2 * 0.218)))``: a quadratic ramp to
        1/58 of the line rate (the shape an LLNL tuning study of IB congestion control calls Mellanox's default)."""
        cct = tuple((0, math.floor(7 * i * i / (95 * 95 * 0.218))) for i in range(128))
        return cls(enabled=True, sw_control_map=0x1F, threshold=8, marking_rate=0, ca_control_map=0xFFFF,
                   ccti_timer=(10,) * N_SLS, ccti_increase=(1,) * N_SLS, cct=cct)

    def as_dict(self) -> dict:
        """JSON-ready: masks as hex strings, tuples as lists."""
        out = {}
        for f in fields(self):
            value = getattr(self, f.name)
            if f.name in ("victim_mask", "credit_mask"):
                value = hex(value)
            elif isinstance(value, tuple):
                value = [list(v) if isinstance(v, tuple) else v for v in value]
            out[f.name] = value
        return out

    @property
    def ccti_limit(self) -> int:
        """The highest CCTI (``CCTI_Limit``): the table's last index, 0 without a table."""
        return max(len(self.cct) - 1, 0)

    def sl_enabled(self, sl: int) -> bool:
        """Whether sources throttle traffic of ``sl``: CC on, the SL in the CA control map, a timer and an
        increase set for it and a table to index."""
        return (self.enabled and bool(self.ca_control_map >> sl & 1) and self.ccti_timer[sl] > 0
                and self.ccti_increase[sl] > 0 and len(self.cct) > 1)

    @property
    def marks(self) -> bool:
        """Whether switches mark FECN: CC on, a threshold set and valid (control map bit 2)."""
        return self.enabled and self.threshold > 0 and bool(self.sw_control_map >> 2 & 1)

    def rate_steps(self) -> np.ndarray:
        """Injection rate per CCTI as a fraction of the line rate, ``[ccti_limit + 1]``, non-increasing.

        A CCT entry is an injection rate delay ``IRD = (Tp >> shift) * multiplier``, ``Tp`` the packet's
        transmission time (the IBTA's formula as the Linux hfi1 driver's ``set_link_ipg`` applies it): a source
        sends a packet then waits ``IRD``, so it sends at ``2**shift / (2**shift + multiplier)`` of the line rate.
        """
        if not self.cct:
            return np.ones(1)
        shift = np.array([s for s, _ in self.cct], dtype=np.float64)
        mult = np.array([m for _, m in self.cct], dtype=np.float64)
        return np.minimum.accumulate(1.0 / (1.0 + mult * 2.0 ** -shift))
