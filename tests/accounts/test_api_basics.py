"""The API's basics (docs/api.md): 401 for anonymous requests, one error format, the schema and
its documentation pages served without a CDN, the four role groups."""

import re

import pytest
from django.contrib.auth.models import Group
from rest_framework import serializers

from accounts.roles import ADMIN, ANALYST, CATALOG_EDITOR, ROLES, VIEWER, user_has_role, user_role
from costapp.api.errors import flatten_errors


@pytest.mark.django_db
def test_an_anonymous_request_gets_401_asking_for_a_token(client):
    response = client.get("/api/v1/")
    assert response.status_code == 401
    assert response["WWW-Authenticate"].startswith("Token")
    assert response.json() == {
        "errors": [{"field": None, "message": "Authentication credentials were not provided."}]
    }


@pytest.mark.django_db
def test_the_schema_and_its_pages_need_no_login_and_no_cdn(client):
    schema = client.get("/api/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json")
    assert schema.status_code == 200
    assert schema.json()["info"]["title"] == "GPU TCO API"
    for path in ("/api/docs/", "/api/redoc/"):
        page = client.get(path)
        assert page.status_code == 200, path
        html = page.content.decode()
        external = [
            url
            for url in re.findall(r"""(?:src|href)=["']([^"']+)""", html)
            if url.startswith(("http:", "https:", "//"))
        ]
        assert external == [], (path, external)


def test_nested_errors_flatten_to_paths_as_in_scenario_documents():
    detail = {
        "name": ["This field is required."],
        "document": {"options": [{}, {"pue": ["must be at least 1"]}]},
        "non_field_errors": ["whole body wrong"],
    }
    assert flatten_errors(detail) == [
        {"field": "name", "message": "This field is required."},
        {"field": "document.options[1].pue", "message": "must be at least 1"},
        {"field": None, "message": "whole body wrong"},
    ]


@pytest.mark.django_db
def test_a_serializer_error_answers_in_the_api_error_format(rf):
    from rest_framework.response import Response
    from rest_framework.views import APIView

    class Body(serializers.Serializer):
        usd = serializers.DecimalField(max_digits=10, decimal_places=2, min_value=0)

    class Echo(APIView):
        authentication_classes: list = []
        permission_classes: list = []

        def post(self, request):
            Body(data=request.data).is_valid(raise_exception=True)
            return Response({})

    response = Echo.as_view()(rf.post("/x", {"usd": "-1"}, content_type="application/json"))
    assert response.status_code == 400
    assert response.data == {
        "errors": [{"field": "usd", "message": "Ensure this value is greater than or equal to 0."}]
    }


@pytest.mark.django_db
def test_the_four_roles_exist_and_each_includes_the_ones_before(django_user_model):
    assert set(Group.objects.values_list("name", flat=True)) >= set(ROLES)
    editor = django_user_model.objects.create_user("ed", password="x")
    editor.groups.add(Group.objects.get(name=CATALOG_EDITOR))
    assert user_role(editor) == CATALOG_EDITOR
    assert [user_has_role(editor, r) for r in (VIEWER, ANALYST, CATALOG_EDITOR, ADMIN)] == [
        True,
        True,
        True,
        False,
    ]
    nobody = django_user_model.objects.create_user("no", password="x")
    assert user_role(nobody) is None
    assert not user_has_role(nobody, VIEWER)
    root = django_user_model.objects.create_superuser("root", password="x")
    assert user_role(root) == ADMIN
