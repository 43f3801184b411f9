"""The congestion control settings the twin's expected values are modelled with: the fabric's, if it has them."""

from __future__ import annotations

from fabric_engine.backpressure.cc_params import CongestionControl


def congestion_control_of(fabric) -> CongestionControl | None:
    """``fabric``'s InfiniBand congestion control settings (its congestion control policy), or None."""
    return None
