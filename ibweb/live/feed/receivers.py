"""The live feed forwards what other apps announce to the clients of a fabric, and follows access changes.

Whatever changes what a user may see (tenant memberships, groups, permissions, the active
flag, the user or one of its tenants or groups deleted) tells that user's open sockets, in
every web process, through the channel layer (group ``user.<id>``), once the change is
committed; each socket then asks :func:`ibweb.access.view_of` again (see
:meth:`ibweb.live.feed.consumers.LiveConsumer.access_changed`). Changes of a partition's members
reach the sockets through the fabric's runner instead (the hosts a view may name).
"""

import logging

from asgiref.sync import async_to_sync
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.db import transaction
from django.db.models.signals import m2m_changed, post_delete, post_save, pre_delete
from django.dispatch import receiver

from ibweb.fabrics.signals import analysis_progress
from ibweb.live.feed.frame_store import broadcast_access_changed, broadcast_progress
from ibweb.tenancy.models import Tenant

log = logging.getLogger("ibweb.live")
User = get_user_model()


@receiver(analysis_progress, dispatch_uid="ibweb.live.analysis_progress")
def forward_analysis_progress(sender, fabric_id: int, payload: dict, **kwargs) -> None:
    """Send an analysis's progress to the fabric's feed group."""
    async_to_sync(broadcast_progress)(fabric_id, payload)


def access_changed(user_ids) -> None:
    """Tell the sockets of ``user_ids`` that their access changed, once the current transaction commits."""
    ids = sorted({int(i) for i in user_ids or ()})
    if not ids:
        return

    def send() -> None:
        for uid in ids:  # the users of one change
            try:
                async_to_sync(broadcast_access_changed)(uid)
            except Exception as exc:  # noqa: BLE001 - the channel layer away costs the notice, not the save
                log.warning("user %s: access change not sent to open feeds: %s", uid, exc)

    transaction.on_commit(send)


@receiver(m2m_changed, sender=Tenant.users.through, dispatch_uid="ibweb.live.tenant_users")
def tenant_users_changed(sender, instance, action, reverse, pk_set, **kwargs) -> None:
    """Users joined or left a tenant (either side of ``Tenant.users``)."""
    if action == "pre_clear" and not isinstance(instance, User):  # the members are gone after the clear
        instance._ibweb_cleared = list(instance.users.values_list("pk", flat=True))
    if action not in ("post_add", "post_remove", "post_clear"):
        return
    if isinstance(instance, User):
        access_changed([instance.pk])
    else:
        access_changed(pk_set or getattr(instance, "_ibweb_cleared", ()))


@receiver(m2m_changed, sender=User.groups.through, dispatch_uid="ibweb.live.user_groups")
def user_groups_changed(sender, instance, action, reverse, pk_set, **kwargs) -> None:
    """Users joined or left a group (roles carry the view-all permission)."""
    if action == "pre_clear" and isinstance(instance, Group):
        instance._ibweb_cleared = list(instance.user_set.values_list("pk", flat=True))
    if action not in ("post_add", "post_remove", "post_clear"):
        return
    if isinstance(instance, Group):
        access_changed(pk_set or getattr(instance, "_ibweb_cleared", ()))
    else:
        access_changed([instance.pk])


@receiver(m2m_changed, sender=User.user_permissions.through, dispatch_uid="ibweb.live.user_permissions")
def user_permissions_changed(sender, instance, action, **kwargs) -> None:
    if action in ("post_add", "post_remove", "post_clear") and isinstance(instance, User):
        access_changed([instance.pk])


@receiver(m2m_changed, sender=Group.permissions.through, dispatch_uid="ibweb.live.group_permissions")
def group_permissions_changed(sender, instance, action, **kwargs) -> None:
    """A group's permissions changed: every user of the group."""
    if action in ("post_add", "post_remove", "post_clear") and isinstance(instance, Group):
        access_changed(instance.user_set.values_list("pk", flat=True))


@receiver(post_save, sender=User, dispatch_uid="ibweb.live.user_saved")
def user_saved(sender, instance, created, update_fields=None, **kwargs) -> None:
    """The active or superuser flag or the password may have changed (a login only updates ``last_login``)."""
    if created or (update_fields is not None and set(update_fields) <= {"last_login"}):
        return
    access_changed([instance.pk])


@receiver(post_delete, sender=User, dispatch_uid="ibweb.live.user_deleted")
def user_deleted(sender, instance, **kwargs) -> None:
    access_changed([instance.pk])


@receiver(pre_delete, sender=Tenant, dispatch_uid="ibweb.live.tenant_deleted")
@receiver(pre_delete, sender=Group, dispatch_uid="ibweb.live.group_deleted")
def members_lose_access(sender, instance, **kwargs) -> None:
    """A tenant or group is deleted: its users' memberships go with it (no m2m signal is sent)."""
    users = instance.users if isinstance(instance, Tenant) else instance.user_set
    access_changed(users.values_list("pk", flat=True))
