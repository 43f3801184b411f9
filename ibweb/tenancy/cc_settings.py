"""A fabric's congestion control settings as stored JSON <-> :class:`CongestionControl`.

The JSON names the dataclass's fields (all but ``enabled``, a column of its own); any may be left out
(OpenSM's default). Bit masks are hex strings (``"0x1f"``: 256 bits do not fit a JSON client's numbers),
``cs_return_delay`` is ``[shift, multiplier]``, per-SL fields are lists of 16 ints and ``cct`` a list of
``[shift, multiplier]``.
"""

from __future__ import annotations

from dataclasses import fields

from fabric_engine.backpressure.cc_params import CongestionControl
from fabric_engine.errors import FabricEngineError
from fabric_engine.formats.opensm_cc import OPENSM_CCT_ENTRY_MAX

__all__ = ["SETTINGS_FIELDS", "to_json", "from_json"]

#: The keys the JSON may hold.
SETTINGS_FIELDS = tuple(f.name for f in fields(CongestionControl) if f.name != "enabled")


def to_json(cc: CongestionControl) -> dict:
    """``cc`` (but ``enabled``) as the JSON stored: every field, masks in hex."""
    data = cc.as_dict()
    data.pop("enabled")
    return data


def from_json(data: dict, enabled: bool) -> CongestionControl:
    """The settings of ``data`` (see the module docstring), validated.

    Raises :class:`ValueError` naming the key for a malformed value, an unknown key or a value out of range
    (:meth:`CongestionControl.from_dict`), or a table longer than OpenSM's 128 entries.
    """
    if not isinstance(data, dict):
        raise ValueError("settings: write a JSON object")
    if "enabled" in data:
        raise ValueError("unknown setting 'enabled' (a field of its own)")
    for key in ("victim_mask", "credit_mask"):
        if key in data and not isinstance(data[key], str):
            raise ValueError(f"{key}: write a hex string such as \"0x1f\"")
    cct = data.get("cct")
    if isinstance(cct, list) and len(cct) > OPENSM_CCT_ENTRY_MAX:
        raise ValueError(f"cct: {len(cct)} entries; OpenSM keeps at most {OPENSM_CCT_ENTRY_MAX}")
    try:
        return CongestionControl.from_dict({**data, "enabled": bool(enabled)}, "settings")
    except FabricEngineError as exc:
        raise ValueError(str(exc).removeprefix("settings: ")) from None
