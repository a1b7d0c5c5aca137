"""The skeleton: home page, login, logout, health check, demo and load_catalog."""

import io
import re
from decimal import Decimal

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.test import override_settings

from accounts.roles import VIEWER
from hardware.gpu_table import read_gpu_table
from hardware.models import GpuModel
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db


def test_anonymous_visitor_of_the_home_page_is_sent_to_login(client):
    response = client.get("/")
    assert response.status_code == 302
    assert response["Location"].startswith("/login/?next=/")


def test_login_page_answers_with_a_form(client):
    response = client.get("/login/")
    assert response.status_code == 200
    assert b'name="username"' in response.content and b'name="password"' in response.content


def test_a_viewer_sees_every_gpu_model_on_the_gpu_models_page(client, catalog):
    user = UserFactory(username="ana", password="correct horse battery", roles=[VIEWER])
    assert client.login(username="ana", password="correct horse battery")
    response = client.get("/gpus/")
    assert response.status_code == 200
    body = response.content.decode()
    for row in read_gpu_table():
        assert row.slug in body
    assert "H100 SXM5 80GB" in body and "989.4" in body
    # figures print as written in the table: 80 GB, 180 GB, never in exponent form (8E+1)
    assert '<td class="num">80</td>' in body and '<td class="num">180</td>' in body
    assert "E+" not in body
    assert user.get_username() in body
    assert "an empty cell means <strong>not published</strong>" in body.replace(
        "An empty", "an empty"
    )


def test_login_then_logout_round_trip(client):
    get_user_model().objects.create_user("bo", password="correct horse battery")
    response = client.post("/login/", {"username": "bo", "password": "correct horse battery"})
    assert response.status_code == 302 and response["Location"] == "/"
    assert client.get("/").status_code == 200
    response = client.post("/logout/")
    assert response.status_code == 302
    assert client.get("/").status_code == 302


def test_wrong_password_is_refused_with_a_message(client):
    get_user_model().objects.create_user("cy", password="correct horse battery")
    response = client.post("/login/", {"username": "cy", "password": "wrong"})
    assert response.status_code == 200
    assert b"didn't match" in response.content


def test_healthz_reports_database_and_broker_without_login(client):
    # the embedded default (tasks in-process); with a broker, the run queue's workers are asked
    # (tests/costapp/test_faults_services.py)
    with override_settings(REDIS_URL=""):
        response = client.get("/healthz")
    assert response.status_code == 200
    body = response.json()
    assert body["status"] == "ok"
    assert body["database"]["status"] == "ok"
    assert body["broker"]["status"] == "ok"
    assert body["workers"] == {"status": "ok", "kind": "in-process"}
    assert "password" not in response.content.decode().lower()


def test_load_catalog_holds_every_row_of_the_gpu_table_with_its_figures(catalog):
    rows = read_gpu_table()
    assert GpuModel.objects.count() == len(rows) >= 28
    h100 = GpuModel.objects.get(slug="h100-sxm")
    assert h100.memory_gb == Decimal("80")
    assert h100.memory_bandwidth_tb_s == Decimal("3.35")
    assert h100.fp8_dense_tflops == Decimal("1978.9")
    assert h100.tdp_w == 700
    a100 = GpuModel.objects.get(slug="a100-sxm-80gb")
    assert a100.fp8_dense_tflops is None
    t4 = GpuModel.objects.get(slug="t4")
    assert t4.bf16_dense_tflops is None and t4.fp16_dense_tflops == Decimal("65")
    for row in rows:
        gpu = GpuModel.objects.get(slug=row.slug)
        for field in row.__dataclass_fields__:
            assert getattr(gpu, field) == getattr(row, field), (row.slug, field)


def test_load_catalog_twice_adds_nothing_and_changes_nothing(catalog):
    before = list(GpuModel.objects.order_by("pk").values())
    out = io.StringIO()
    call_command("load_catalog", stdout=out)
    assert list(GpuModel.objects.order_by("pk").values()) == before
    assert "0 created, 0 updated" in out.getvalue()


def test_load_catalog_repairs_a_hand_edited_figure(catalog):
    GpuModel.objects.filter(slug="l4").update(memory_gb=Decimal("99"))
    out = io.StringIO()
    call_command("load_catalog", stdout=out)
    assert GpuModel.objects.get(slug="l4").memory_gb == Decimal("24")
    assert "1 updated" in out.getvalue()


def test_demo_without_serving_creates_a_user_with_a_fresh_random_password():
    first, second = io.StringIO(), io.StringIO()
    call_command("demo", no_serve=True, stdout=first)
    call_command("demo", no_serve=True, stdout=second)
    pattern = re.compile(r"demo user: demo\s+password: (\S+)")
    password_1 = pattern.search(first.getvalue()).group(1)
    password_2 = pattern.search(second.getvalue()).group(1)
    assert password_1 != password_2 and len(password_2) >= 12
    user = get_user_model().objects.get(username="demo")
    assert user.check_password(password_2) and not user.check_password(password_1)
    assert GpuModel.objects.count() == len(read_gpu_table())
