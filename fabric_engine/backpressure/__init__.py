"""Congestion as a lossless InfiniBand fabric has it without congestion control (issue 41).

Beside :func:`fabric_engine.flows.max_min_fair` (every flow its fair share: a fabric with ideal
congestion control), this package computes steady-state rates with credit-based flow control: output
ports shared among input ports by round-robin arbiters, head-of-line blocking in input buffers, the
back-pressure that spreads it upstream hop by hop, and virtual lanes with weighted arbitration.

* :mod:`.hops` -- paths as hops (input buffer, output port, lane): :class:`Hops`, :func:`order_paths`
* :mod:`.waterfill` -- arbiters' water levels, many at once: :func:`water_levels`
* :mod:`.solve` -- the fixed point: :func:`credit_rates` -> :class:`CreditResult`; :class:`Scratch`, its kept memory

Validated against BookSim 2 (``tests/reference/congestion``); model, assumptions and error:
``docs/workloads-and-congestion.md``.
"""

from .hops import Hops, order_paths
from .solve import CreditResult, Scratch, credit_rates
from .waterfill import water_levels

__all__ = ["Hops", "order_paths", "CreditResult", "Scratch", "credit_rates", "water_levels"]
