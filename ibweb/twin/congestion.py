"""The congestion control settings the twin's expected values are modelled with: the fabric's (its policy's)."""

from __future__ import annotations

from fabric_engine.backpressure.cc_params import CongestionControl
from ibweb.tenancy.models import congestion_control_of as _of


def congestion_control_of(fabric) -> CongestionControl | None:
    """``fabric``'s InfiniBand congestion control settings when enabled, else None (the credit model alone)."""
    cc = _of(fabric)
    return cc if cc.enabled else None
