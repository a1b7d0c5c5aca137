"""Serializers of the scenarios and runs API (docs/api.md, "Scenarios and runs")."""

from typing import Any

from rest_framework import serializers

from costapp import services
from costapp.api.parsers import scenario_error_detail
from costapp.models import Scenario, SimulationRun
from costapp.tco.errors import ScenarioError

MAX_SEED = 2**63 - 1
MAX_PATHS = 100_000


class ScenarioSerializer(serializers.HyperlinkedModelSerializer):
    """A saved scenario; the document is checked against the contract and today's catalog."""

    owner = serializers.CharField(source="owner.username", read_only=True)
    document = serializers.JSONField()
    runs = serializers.SerializerMethodField()

    class Meta:
        model = Scenario
        fields = [
            "id",
            "url",
            "owner",
            "name",
            "description",
            "shared",
            "document",
            "created",
            "updated",
            "runs",
        ]
        read_only_fields = ["created", "updated"]
        extra_kwargs = {"url": {"view_name": "scenario-detail"}}

    def get_runs(self, scenario: Scenario) -> str:
        """The URL listing this scenario's runs."""
        from rest_framework.reverse import reverse

        url = reverse("run-list", request=self.context.get("request"))
        return f"{url}?scenario={scenario.pk}"

    def create(self, validated_data: dict[str, Any]) -> Scenario:
        try:
            return services.scenario_create(
                owner=self.context["request"].user,
                name=validated_data["name"],
                description=validated_data.get("description", ""),
                shared=validated_data.get("shared", False),
                document=validated_data["document"],
            )
        except ScenarioError as exc:
            raise serializers.ValidationError(
                scenario_error_detail(exc.errors, prefix="document")
            ) from None

    def update(self, instance: Scenario, validated_data: dict[str, Any]) -> Scenario:
        try:
            return services.scenario_update(scenario=instance, **validated_data)
        except ScenarioError as exc:
            raise serializers.ValidationError(
                scenario_error_detail(exc.errors, prefix="document")
            ) from None


class RunSerializer(serializers.HyperlinkedModelSerializer):
    """A run: its state, and its result document once it has succeeded."""

    scenario = serializers.PrimaryKeyRelatedField(read_only=True)
    result = serializers.JSONField(read_only=True)

    class Meta:
        model = SimulationRun
        fields = [
            "id",
            "url",
            "scenario",
            "status",
            "progress",
            "seed",
            "paths",
            "created",
            "started",
            "finished",
            "engine_version",
            "error",
            "result",
        ]
        read_only_fields = fields
        extra_kwargs = {"url": {"view_name": "run-detail"}}


class RunCreateSerializer(serializers.Serializer):
    """The body of ``POST scenarios/{id}/runs/``: every field optional."""

    seed = serializers.IntegerField(min_value=0, max_value=MAX_SEED, required=False)
    paths = serializers.IntegerField(min_value=0, max_value=MAX_PATHS, required=False)
    reprice = serializers.BooleanField(default=False)

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        if not isinstance(self.initial_data, dict):
            raise serializers.ValidationError("the body must be a JSON object")
        unknown = [key for key in self.initial_data if key not in self.fields]
        if unknown:
            raise serializers.ValidationError(
                {key: ["unknown field (seed, paths and reprice are known)"] for key in unknown}
            )
        return attrs
