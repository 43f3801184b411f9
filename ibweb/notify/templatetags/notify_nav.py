"""The site navigation's link to the notifications page, for those who may see it (:func:`ibweb.notify.access.
may_see_page`): ``{% load notify_nav %}{% notifications_link nav %}`` in ``dashboard/base.html``."""

from __future__ import annotations

from django import template
from django.urls import reverse
from django.utils.html import format_html

from ..access import may_see_page

register = template.Library()


@register.simple_tag(takes_context=True)
def notifications_link(context, nav: str = "") -> str:
    """The link (``aria-current`` on the page itself), or nothing for a user who may not see the page."""
    request = context.get("request")
    user = context.get("user") or getattr(request, "user", None)
    if user is None or not may_see_page(user):
        return ""
    if nav == "notifications":
        return format_html('<a href="{}" aria-current="page">Notifications</a>', reverse("notify:notifications"))
    return format_html('<a href="{}">Notifications</a>', reverse("notify:notifications"))
