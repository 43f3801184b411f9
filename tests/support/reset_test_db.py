"""Drop the PostgreSQL test databases a previous, interrupted run may have left (``make test-services``).

pytest-django recreates ``test_<name>`` (``test_<name>_gw0``, ``_gw1``, ... under pytest-xdist); a leftover
one that some dead run still held open would make that fail, so they are dropped first, closing any session
on them.
"""

import re
import sys
from urllib.parse import urlparse

import psycopg


def main(url: str) -> None:
    name = f"test_{urlparse(url).path.lstrip('/')}"
    with psycopg.connect(url, autocommit=True) as conn:
        rows = conn.execute("SELECT datname FROM pg_database WHERE datname = %s OR datname ~ %s",
                            (name, f"^{re.escape(name)}_gw[0-9]+$")).fetchall()
        for (found,) in rows:
            conn.execute(f'DROP DATABASE IF EXISTS "{found}" WITH (FORCE)')


if __name__ == "__main__":
    main(sys.argv[1])
