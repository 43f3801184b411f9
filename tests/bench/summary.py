"""The summary ``make bench`` prints last: every bench's ``TARGET`` lines as one table; exit 1 if any missed.

Run: ``python tests/bench/summary.py LOG [FAILED_BENCH ...]`` (the Makefile passes the benches that exited non-zero).
"""

from __future__ import annotations

import sys
from pathlib import Path


def main(argv: list[str]) -> int:
    log, failed = Path(argv[1]), argv[2:]
    bench, rows = "", []
    for line in log.read_text().splitlines():
        if line.startswith("== "):
            bench = Path(line[3:].strip()).stem
        elif line.startswith("TARGET "):
            verdict, what, measured, limit = (part.strip() for part in line[len("TARGET "):].split("|"))
            rows.append((verdict, bench, what, measured, limit))
    width = max([len(r[2]) for r in rows] + [10])
    print("\n== summary of all targets")
    print(f"{'':6} {'bench':<20} {'target':<{width}} {'measured':>14} {'limit':>14}")
    for verdict, name, what, measured, limit in rows:
        print(f"{verdict:6} {name:<20} {what:<{width}} {measured:>14} {limit:>14}")
    missed = [r for r in rows if r[0] != "OK"]
    for name in failed:
        print(f"FAILED {name}: exited non-zero")
    failures = f", {len(failed)} benches failed" if failed else ""
    print(f"{len(rows) - len(missed)} of {len(rows)} targets met{failures}")
    return 1 if missed or failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
