"""The roles kept in force: after every migration each role's group gets its model permissions,
and whenever a user's groups change their staff flag follows their role
(``accounts.services.role_permissions_sync``, ``accounts.services.role_staff_sync``)."""

from typing import Any

from django.contrib.auth import get_user_model

from . import services


def permissions_after_migrate(**kwargs: Any) -> None:
    """``post_migrate`` (sent once per app, after Django has made that app's permissions)."""
    services.role_permissions_sync()


def staff_after_groups_change(
    *, instance: Any, action: str, reverse: bool, pk_set: set[int] | None, **kwargs: Any
) -> None:
    """``m2m_changed`` of ``User.groups``, from either side (``user.groups.add(group)`` or
    ``group.user_set.add(user)``)."""
    if action == "pre_clear" and reverse:
        # the group loses every user: remember them before the rows go
        instance._gpu_tco_cleared = list(instance.user_set.values_list("pk", flat=True))
        return
    if action not in ("post_add", "post_remove", "post_clear"):
        return
    if not reverse:
        services.role_staff_sync(user=instance)
        return
    if action == "post_clear":
        pks = set(getattr(instance, "_gpu_tco_cleared", []))
    else:
        pks = set(pk_set or ())
    for user in get_user_model().objects.filter(pk__in=pks):
        services.role_staff_sync(user=user)


def connect() -> None:
    from django.db.models.signals import m2m_changed, post_migrate

    post_migrate.connect(permissions_after_migrate, dispatch_uid="accounts-role-permissions")
    m2m_changed.connect(
        staff_after_groups_change,
        sender=get_user_model().groups.through,
        dispatch_uid="accounts-role-staff",
    )
