"""A superuser and clients signed in as them: the API client and the page client (import the fixtures)."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User
from django.test import Client
from rest_framework.test import APIClient


@pytest.fixture
def root(db) -> User:
    return User.objects.create_superuser("root", password="pw-root")


@pytest.fixture
def api(root) -> APIClient:
    c = APIClient()
    c.force_authenticate(root)
    return c


@pytest.fixture
def page(root) -> Client:
    c = Client()
    c.force_login(root)
    return c
