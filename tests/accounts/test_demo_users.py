"""``demo`` makes one user per role and prints each password once."""

import io
import re

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from rest_framework.test import APIClient

from accounts.roles import ROLES, user_role


@pytest.mark.django_db
def test_demo_makes_one_user_per_role_whose_printed_password_gets_a_token():
    out = io.StringIO()
    call_command("demo", no_serve=True, stdout=out)
    printed = dict(re.findall(r"role user: (\S+)\s+password: (\S+)", out.getvalue()))
    assert sorted(printed) == sorted(f"demo-{role}" for role in ROLES)
    for role in ROLES:
        username = f"demo-{role}"
        user = get_user_model().objects.get(username=username)
        assert user_role(user) == role and not user.is_superuser
        # catalog editors and admins use the admin, set by their role
        assert user.is_staff == (role in ("catalog-editor", "admin")), username
        response = APIClient().post(
            "/api/v1/auth/tokens/",
            {"username": username, "password": printed[username]},
            format="json",
        )
        assert response.status_code == 201
    again = io.StringIO()
    call_command("demo", no_serve=True, stdout=again)
    second = dict(re.findall(r"role user: (\S+)\s+password: (\S+)", again.getvalue()))
    assert all(second[name] != printed[name] for name in printed)
