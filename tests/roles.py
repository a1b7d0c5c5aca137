"""Users holding a role (accounts.roles: the groups viewer, analyst, catalog-editor, admin)."""

from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group


def user_with_role(username: str, role: str | None, **fields):
    """A new user in ``role``'s group only (no group for ``None``). The group is made again when
    missing: a transactional test empties the tables the roles migration filled."""
    user = get_user_model().objects.create_user(username, **fields)
    if role is not None:
        user.groups.add(Group.objects.get_or_create(name=role)[0])
    return user
