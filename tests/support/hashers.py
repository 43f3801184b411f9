"""The password hasher of the in-process tests: the shipped one (PBKDF2-SHA256) at one iteration.

Django's default hasher spends a third of a second of CPU on each password it sets or checks (1,000,000
iterations); the in-process tests create users with passwords and sign them in hundreds of times. Only the
iteration count differs: the same algorithm name, encoding and checks (a wrong password is still refused).
The servers the tests start (``tests/support/server.py``) run the settings as shipped, this hasher's cost
included.
"""

from __future__ import annotations

from django.contrib.auth.hashers import PBKDF2PasswordHasher

SHIPPED = "django.contrib.auth.hashers.PBKDF2PasswordHasher"


class OneIterationPBKDF2PasswordHasher(PBKDF2PasswordHasher):
    """``pbkdf2_sha256`` at 1 iteration (its hashes are not upgraded on sign-in: it is the one of its algorithm)."""

    iterations = 1


def in_process(hashers: list[str]) -> list[str]:
    """``hashers`` (the settings' ``PASSWORD_HASHERS``) with the shipped PBKDF2 hasher replaced by the one above."""
    return [f"{__name__}.{OneIterationPBKDF2PasswordHasher.__name__}" if h == SHIPPED else h for h in hashers]
