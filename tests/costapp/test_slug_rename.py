"""A slug that saved scenarios name cannot be renamed without saying so: the API refuses with a
400 on ``slug`` naming the scenarios (count and ids), the admin with a form error; a slug no
scenario names renames as before."""

import pytest
from django.forms.models import model_to_dict
from django.urls import reverse
from rest_framework.test import APIClient

from accounts.roles import CATALOG_EDITOR
from accounts.services import token_create
from hardware.models import GpuModel, Provider
from tests.costapp.factories import ScenarioFactory
from tests.factories import UserFactory
from tests.hardware.factories import GpuModelFactory, ProviderFactory


def document(provider: str, gpu: str, egress: str | None = None) -> dict:
    option = {
        "type": "cloud",
        "name": "rent",
        "gpu": gpu,
        "offer": {"provider": provider, "instance": "x", "region": "r"},
    }
    if egress is not None:
        option["egress_provider"] = egress
    return {
        "name": "d",
        "workloads": [{"type": "steady", "name": "w", "gpus": 1}],
        "options": [option],
    }


@pytest.fixture
def editor():
    user = UserFactory(username="editor", roles=[CATALOG_EDITOR])
    _, key = token_create(user=user)
    return APIClient(HTTP_AUTHORIZATION=f"Token {key}")


@pytest.mark.django_db
def test_the_api_refuses_to_rename_a_provider_slug_saved_scenarios_name(editor):
    ProviderFactory(slug="cloudco")
    ProviderFactory(slug="egressco")
    GpuModelFactory(slug="h100-test")
    first = ScenarioFactory(document=document("cloudco", "h100-test"))
    second = ScenarioFactory(document=document("othercloud", "h100-test", egress="cloudco"))
    ScenarioFactory(document=document("othercloud", "h100-test"))

    response = editor.patch("/api/v1/providers/cloudco/", {"slug": "cloudco-2"}, format="json")
    assert response.status_code == 400, response.content
    [error] = response.json()["errors"]
    assert error["field"] == "slug"
    assert f"2 saved scenarios (ids {first.pk}, {second.pk})" in error["message"]
    assert Provider.objects.filter(slug="cloudco").exists()

    # the same slug, another field, or a slug no scenario names: as before
    assert (
        editor.patch(
            "/api/v1/providers/cloudco/", {"slug": "cloudco", "name": "Renamed"}, format="json"
        ).status_code
        == 200
    )
    assert (
        editor.patch(
            "/api/v1/providers/egressco/", {"slug": "egressco-2"}, format="json"
        ).status_code
        == 200
    )


@pytest.mark.django_db
def test_the_api_refuses_to_rename_a_gpu_slug_a_workload_names(editor):
    GpuModelFactory(slug="h100-test")
    scenario = ScenarioFactory(document=document("cloudco", "h100-test"))
    response = editor.put(
        "/api/v1/gpus/h100-test/",
        {**_gpu_body(GpuModel.objects.get(slug="h100-test")), "slug": "h100-new"},
        format="json",
    )
    assert response.status_code == 400, response.content
    [error] = response.json()["errors"]
    assert error["field"] == "slug" and f"1 saved scenario (id {scenario.pk})" in error["message"]
    scenario.delete()
    assert (
        editor.patch("/api/v1/gpus/h100-test/", {"slug": "h100-new"}, format="json").status_code
        == 200
    )


def _gpu_body(gpu: GpuModel) -> dict:
    return {
        key: (str(value) if value is not None and not isinstance(value, int | str) else value)
        for key, value in model_to_dict(gpu, exclude=["id"]).items()
        if value is not None
    }


@pytest.mark.django_db
def test_the_admin_shows_a_form_error_on_the_slug(admin_client):
    provider = ProviderFactory(slug="cloudco", name="CloudCo")
    scenario = ScenarioFactory(document=document("cloudco", "h100-test"))
    url = reverse("admin:hardware_provider_change", args=[provider.pk])
    data = {
        key: value
        for key, value in model_to_dict(provider, exclude=["id"]).items()
        if value is not None
    }
    response = admin_client.post(url, {**data, "slug": "cloudco-2"})
    assert response.status_code == 200  # the form again, with its error
    errors = response.context["adminform"].form.errors
    assert list(errors) == ["slug"]
    assert f"1 saved scenario (id {scenario.pk})" in errors["slug"][0]
    provider.refresh_from_db()
    assert provider.slug == "cloudco"
