"""Drop the PostgreSQL test database a previous, interrupted run may have left (``make test-services``).

pytest-django recreates ``test_<name>``; a leftover one that some dead run still held
open would make that fail, so it is dropped first, closing any session on it.
"""

import sys
from urllib.parse import urlparse

import psycopg


def main(url: str) -> None:
    name = f"test_{urlparse(url).path.lstrip('/')}"
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


if __name__ == "__main__":
    main(sys.argv[1])
