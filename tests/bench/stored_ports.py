"""What the benches of the pages read first from a running server's per-port history."""

from __future__ import annotations

import time

__all__ = ["hottest"]


def hottest(server, slug: str, n: int, timeout_s: float = 300) -> list[dict]:
    """The ``n`` hottest ports of fabric ``slug`` over the last hour once the store has that many (written every
    sweep); a ``TimeoutError`` naming how many it had after ``timeout_s``."""
    deadline = time.monotonic() + timeout_s
    while True:
        now = time.time()
        ports = server.get_json(f"/api/fabrics/fabrics/{slug}/tsdb/top/?series=utilization&n={n}"
                                f"&start={now - 3600}&end={now}")["ports"]
        if len(ports) >= n:
            return ports
        if time.monotonic() > deadline:
            raise TimeoutError(f"only {len(ports)} ports stored after {timeout_s} s")
        time.sleep(2)
