"""What the ``run_engine`` processes of a test or bench lead now, read from their logs (ibweb.live.engine.share)."""

from __future__ import annotations

import re
import time

EVENT = re.compile(r"fabric (\S+): (this process leads|handed over)")


def leads_now(log_text: str) -> set[str]:
    """The fabrics a process leads now, from its log: the last of 'leads' and 'handed over' for each."""
    now: dict[str, bool] = {}
    for slug, what in EVENT.findall(log_text):
        now[slug] = what == "this process leads"
    return {slug for slug, leads in now.items() if leads}


def wait_for_shares(group, names: list[str], slugs: list[str], sizes: list[int] | None = None,
                    timeout_s: float = 60) -> dict[str, set[str]]:
    """Wait until the processes ``names`` of an ``Engines`` group lead every one of ``slugs`` once, in shares
    of ``sizes`` (sorted; any sizes when None); the share of each."""
    deadline = time.monotonic() + timeout_s
    while True:
        shares = {n: leads_now(group.logs[n].read_text()) for n in names}
        led = sorted(s for share in shares.values() for s in share)
        if led == sorted(slugs) and (sizes is None or sorted(len(s) for s in shares.values()) == sizes):
            return shares
        assert time.monotonic() < deadline, f"fabrics not shared as {sizes}: {shares}"
        time.sleep(0.2)
