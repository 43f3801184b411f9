"""One sign-in backoff per account, whatever the spelling of its name (issue 35).

After 9 failures ``username=victim`` got 429 while ``username=ｖｉｃｔｉｍ`` (fullwidth) was checked at once: the
backoff keyed the name as typed, and Django's sign-in form normalises it (NFKC) before authenticating.
"""

from __future__ import annotations

import unicodedata

import pytest
from django.contrib.auth.forms import AuthenticationForm
from django.contrib.auth.models import User
from django.core.cache import cache
from django.test import Client, RequestFactory
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ibweb.auth.signin import LOGIN_THROTTLE as THROTTLE

pytestmark = pytest.mark.django_db

PASSWORD = "a-long-passphrase-42"
NAME = "victim"
_CODE_POINTS = [*range(0x80), *range(0xA0, 0x3000), *range(0xFF00, 0xFFF0), *range(0x1D400, 0x1D800)]
#: Every character Django's form and ``casefold`` take for each letter of NAME (ASCII case, fullwidth, math, ...).
SPELLINGS = {c: sorted({ch for ch in map(chr, _CODE_POINTS)
                        if unicodedata.normalize("NFKC", ch).casefold() == c}) for c in set(NAME + "n")}
HYPOTHESIS = settings(max_examples=60, derandomize=True, database=None, deadline=None,
                      suppress_health_check=[HealthCheck.function_scoped_fixture])


def spelled(name: str) -> st.SearchStrategy[str]:
    """Spellings of ``name``: each letter any of its forms, maybe with blanks around (the form strips them)."""
    letters = st.tuples(*[st.sampled_from(SPELLINGS[c]) for c in name]).map("".join)
    return st.tuples(st.sampled_from(["", " "]), letters, st.sampled_from(["", "\t"])).map("".join)


@pytest.fixture
def victim(settings):
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]  # many sign-ins below
    return User.objects.create_user(NAME, password=PASSWORD)


def _under_attack() -> None:
    cache.clear()
    for _ in range(9):
        THROTTLE.failed(THROTTLE.account_key(NAME))


def _refused(spelling: str, address: str = "10.7.0.1") -> int | None:
    return THROTTLE.refused(RequestFactory().post("/", REMOTE_ADDR=address), THROTTLE.account_key(spelling))


def test_the_fixture_has_the_spellings_that_matter():
    assert {"v", "V", "\uff56", "\uff36", "\U0001d42f"} <= set(SPELLINGS["v"])  # v V ｖ Ｖ 𝐯


@HYPOTHESIS
@given(spelling=spelled(NAME))
def test_every_spelling_of_an_account_shares_its_backoff(victim, spelling):
    _under_attack()
    assert _refused(spelling) is not None, spelling


@HYPOTHESIS
@given(spelling=spelled(NAME))
def test_a_spelling_django_signs_in_with_is_keyed_as_its_account(victim, spelling):
    form = AuthenticationForm(data={"username": spelling, "password": PASSWORD})
    if form.is_valid():
        assert form.get_user().pk == victim.pk
        assert THROTTLE.account_key(spelling) == THROTTLE.user_key(victim), spelling


@HYPOTHESIS
@given(spelling=spelled("victin"))
def test_another_name_is_not_slowed_and_unknown_names_share_one_count_per_spelling(victim, spelling):
    _under_attack()
    assert _refused(spelling) is None
    assert THROTTLE.account_key(spelling) == THROTTLE.account_key("VICTIN")


def _login(client, username: str, password: str, address: str):
    return client.post("/accounts/login/", {"username": username, "password": password}, REMOTE_ADDR=address)


def test_the_fullwidth_name_is_refused_with_the_ascii_one_and_signs_in_as_the_account(victim):
    cache.clear()
    assert [_login(Client(), NAME, "wrong", f"10.8.0.{i}").status_code for i in range(5)] == [200] * 5
    for i in range(4):
        _login(Client(), NAME, "wrong", f"10.8.1.{i}")
        cache.delete(f"ibweb:login-last:{THROTTLE.account_key(NAME)}")  # no waiting between the attempts
    assert _login(Client(), NAME, "wrong", "10.8.2.1").status_code == 200
    assert _login(Client(), NAME, "wrong", "10.8.2.2").status_code == 429
    assert _login(Client(), "ｖｉｃｔｉｍ", PASSWORD, "10.8.2.3").status_code == 429
    cache.delete(f"ibweb:login-last:{THROTTLE.account_key(NAME)}")
    owner = Client()
    assert _login(owner, "ｖｉｃｔｉｍ", PASSWORD, "10.8.2.4").status_code == 302  # the same account
    assert cache.get(f"ibweb:login-fail:{THROTTLE.account_key(NAME)}") is None  # its success cleared the count
    assert THROTTLE.known_device(owner.post("/").wsgi_request, THROTTLE.account_key(NAME))
