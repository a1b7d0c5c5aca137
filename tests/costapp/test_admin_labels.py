"""The admin's date-and-time inputs each have a label (templates/admin/widgets/split_datetime.html
through the TEMPLATES form renderer): Django labels the pair, not the inputs."""

import re

import pytest
from django.contrib.auth.models import User

pytestmark = pytest.mark.django_db


def test_each_date_and_time_input_of_an_admin_form_has_a_label(client):
    client.force_login(User.objects.create_superuser("root", password="x" * 16))
    html = client.get("/admin/hardware/instanceprice/add/").content.decode()
    for field in ("first_seen", "last_seen", "vanished_at"):
        for part, label in (("0", "Date:"), ("1", "Time:")):
            assert f'<label for="id_{field}_{part}">{label}</label>' in html, (field, part)
            assert f'id="id_{field}_{part}"' in html
    # every id a label points at exists
    for target in re.findall(r'<label for="([^"]+)"', html):
        assert f'id="{target}"' in html, target
