"""Who sees the notifications page and its actions, asked of the access layer (:func:`ibweb.access.view_of`) and the
model permissions, as the API decides its reads and writes (:mod:`ibweb.notify.api.permissions`)."""

from __future__ import annotations

from ibweb.access import view_of

__all__ = ["may_see_page", "may_silence", "may_write_channels"]


def may_see_page(user) -> bool:
    """The notifications page (and its link): users who see tenants, their own or all (a tenant's users read its
    channels, rules and deliveries; ``ALL`` everything). Below, there is nothing of theirs to show."""
    return bool(getattr(user, "is_authenticated", False)) and view_of(user).sees_tenants


def may_silence(user) -> bool:
    """Whether ``user`` may create silences: the ``ALL`` level with ``notify.add_silence`` (as the API's writes)."""
    return view_of(user).sees_all and user.has_perm("notify.add_silence")


def may_write_channels(user) -> bool:
    """Whether ``user`` may create channels and rules (of the operators at ``ALL``, else of their tenants)."""
    return view_of(user).sees_tenants and user.has_perm("notify.add_channel")
