"""Catalog editors and admins use the admin: their staff flag follows their role, whichever side
the groups change from, and their groups hold the model permissions of their role
(accounts.roles.ROLE_MODELS), given after every migration."""

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group

from accounts.roles import ADMIN, ANALYST, CATALOG_EDITOR, ROLES, VIEWER
from accounts.services import role_permissions_sync
from tests.roles import user_with_role

pytestmark = pytest.mark.django_db


def perms(role: str) -> set[str]:
    return {
        f"{p.content_type.app_label}.{p.codename}"
        for p in Group.objects.get(name=role).permissions.select_related("content_type")
    }


def test_each_role_group_holds_its_roles_model_permissions():
    assert perms(VIEWER) == perms(ANALYST) == set()
    editor = perms(CATALOG_EDITOR)
    assert {
        "hardware.change_dedicatedquote",
        "hardware.add_purchasequote",
        "hardware.change_instanceprice",
        "hardware.change_tokenprice",
        "hardware.delete_assumption",
    } <= editor
    assert not {p for p in editor if p.endswith("refreshrun") or p.startswith("auth.")}
    admin = perms(ADMIN)
    assert editor < admin
    assert {"hardware.change_refreshrun", "auth.change_user", "auth.view_group"} <= admin
    assert "auth.change_group" not in admin and "auth.change_permission" not in admin
    # a group that lost its permissions (or went) gets them back on the next sync
    Group.objects.get(name=ADMIN).permissions.clear()
    Group.objects.filter(name=VIEWER).delete()
    role_permissions_sync()
    assert perms(ADMIN) == admin and set(Group.objects.values_list("name", flat=True)) >= set(ROLES)


def test_the_staff_flag_follows_the_role_from_either_side_of_the_groups():
    def staff(user) -> bool:
        return get_user_model().objects.get(pk=user.pk).is_staff

    editor = user_with_role("ed", CATALOG_EDITOR)
    analyst = user_with_role("ana", ANALYST)
    assert staff(editor) and not staff(analyst)
    editor.groups.set([Group.objects.get(name=VIEWER)])
    assert not staff(editor)
    Group.objects.get(name=ADMIN).user_set.add(analyst)
    assert staff(analyst)
    Group.objects.get(name=ADMIN).user_set.clear()
    assert not staff(analyst)
    # a hand-set flag does not survive the next change of groups
    get_user_model().objects.filter(pk=editor.pk).update(is_staff=True)
    editor.groups.add(Group.objects.get(name=ANALYST))
    assert not staff(editor)
    # a superuser stays staff without a role
    boss = get_user_model().objects.create_superuser("boss")
    boss.groups.add(Group.objects.get(name=VIEWER))
    boss.groups.clear()
    assert staff(boss)


def test_editors_and_admins_use_the_admin_within_their_role(client):
    editor = user_with_role("ed", CATALOG_EDITOR)
    admin = user_with_role("adm", ADMIN)
    boss = get_user_model().objects.create_superuser("boss")
    for user, allowed, refused in (
        (
            editor,
            ["/admin/", "/admin/hardware/dedicatedquote/", "/admin/hardware/assumption/"],
            ["/admin/hardware/refreshrun/", "/admin/auth/user/", f"/admin/auth/user/{boss.pk}/change/"],
        ),
        (
            admin,
            ["/admin/", "/admin/hardware/refreshrun/", "/admin/auth/user/",
             f"/admin/auth/user/{editor.pk}/change/"],
            ["/admin/auth/group/add/", f"/admin/auth/user/{boss.pk}/delete/"],
        ),
    ):  # fmt: skip
        client.force_login(user)
        for url in allowed:
            assert client.get(url).status_code == 200, (user, url)
        for url in refused:
            assert client.get(url).status_code == 403, (user, url)
    # an admin sees a user's superuser flag and staff flag but cannot set them
    client.force_login(admin)
    form = client.get(f"/admin/auth/user/{editor.pk}/change/").context["adminform"].form
    assert "is_superuser" not in form.fields and "is_staff" not in form.fields
    assert "groups" in form.fields
    # a superuser's account is read-only to an admin
    page = client.get(f"/admin/auth/user/{boss.pk}/change/")
    assert page.status_code == 200 and "is_superuser" not in page.context["adminform"].form.fields
    assert not page.context["has_change_permission"]
