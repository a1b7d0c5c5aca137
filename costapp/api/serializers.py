"""Serializers of the scenarios and runs API (docs/api.md, "Scenarios and runs")."""

from typing import Any

from rest_framework import serializers

from costapp.api.parsers import scenario_error_detail
from costapp.models import Scenario, SimulationRun
from costapp.scenarios import services
from costapp.tco import ScenarioError, hidden_characters_error

MAX_SEED = 2**63 - 1
MAX_PATHS = 100_000


class ScenarioSerializer(serializers.HyperlinkedModelSerializer):
    """A saved scenario; the document is checked against the contract and today's catalog."""

    owner = serializers.CharField(
        source="owner.username", read_only=True, help_text="username of the scenario's owner"
    )
    document = serializers.JSONField(
        help_text="the scenario document as written (docs/scenario-format.md)"
    )
    runs = serializers.SerializerMethodField(help_text="URL of the list of this scenario's runs")

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
        extra_kwargs = {
            "url": {"view_name": "scenario-detail", "help_text": "this scenario's URL"},
            "name": {"help_text": "label of the scenario"},
            "description": {"help_text": "free text about the scenario"},
            "shared": {
                "help_text": "true: every signed-in user with a role may read it (only the owner may change it)"
            },
            "created": {"help_text": "when the scenario was saved first [UTC]"},
            "updated": {"help_text": "when the scenario was last changed [UTC]"},
        }

    def validate_name(self, value: str) -> str:
        if hidden := hidden_characters_error(value):
            raise serializers.ValidationError(hidden)
        return value

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

    scenario: serializers.PrimaryKeyRelatedField[Scenario] = serializers.PrimaryKeyRelatedField(
        read_only=True, help_text="id of the scenario this run prices [id]"
    )
    result = serializers.JSONField(
        read_only=True,
        help_text="the result document once the run has succeeded, else null "
        "(docs/scenario-format.md)",
    )

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
        extra_kwargs = {
            "url": {"view_name": "run-detail", "help_text": "this run's URL"},
            "status": {"help_text": "queued, running, succeeded, failed or cancelled"},
            "progress": {"help_text": "share of the run's work done [%, 0-100]"},
            "seed": {"help_text": "the Monte Carlo seed used [integer]"},
            "paths": {"help_text": "Monte Carlo paths [count]"},
            "created": {"help_text": "when the run was queued [UTC]"},
            "started": {"help_text": "when a worker started it [UTC]"},
            "finished": {"help_text": "when it ended [UTC]"},
            "engine_version": {"help_text": "version of the engine that computed it"},
            "error": {"help_text": "why the run failed, or empty"},
        }


class RunCreateSerializer(serializers.Serializer):
    """The body of ``POST scenarios/{id}/runs/``: every field optional."""

    seed = serializers.IntegerField(
        min_value=0,
        max_value=MAX_SEED,
        required=False,
        help_text="Monte Carlo seed; default: the last run's, else the document's [integer]",
    )
    paths = serializers.IntegerField(
        min_value=0,
        max_value=MAX_PATHS,
        required=False,
        help_text="Monte Carlo paths; default: the last run's, else the document's [count]",
    )
    reprice = serializers.BooleanField(
        default=False,
        help_text="true: resolve catalog references at today's prices instead of copying the "
        "last run's frozen inputs",
    )

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        if not isinstance(self.initial_data, dict):
            raise serializers.ValidationError("the body must be a JSON object")
        unknown = [key for key in self.initial_data if key not in self.fields]
        if unknown:
            raise serializers.ValidationError(
                {key: ["unknown field (seed, paths and reprice are known)"] for key in unknown}
            )
        return attrs


class RiskOptionSerializer(serializers.Serializer):
    """One option's risk figures over the run's paths."""

    name = serializers.CharField(help_text="the option's name, as in the result")
    feasible = serializers.BooleanField(help_text="whether it does all the work")
    mean_npv_usd = serializers.FloatField(
        allow_null=True, help_text="mean NPV over the paths [USD]"
    )
    p90_npv_usd = serializers.FloatField(
        allow_null=True, help_text="90th percentile of the NPV over the paths [USD]"
    )
    tail_npv_usd = serializers.FloatField(
        allow_null=True,
        help_text="mean NPV of the worst paths, the simulation's tail_fraction of them [USD]",
    )
    probability_cheapest = serializers.FloatField(
        allow_null=True,
        help_text="share of paths on which it has the lowest NPV of the options doing all "
        "the work [fraction]",
    )
    cheapest_so_far = serializers.ListField(
        child=serializers.FloatField(),
        help_text="per month 0 … H, the share of paths on which it has cost least so far "
        "[fraction]",
    )
    exceeds_budget = serializers.FloatField(
        allow_null=True,
        help_text="share of paths whose total exceeds ?budget=, null without one [fraction]",
    )


class RiskCommitmentSerializer(serializers.Serializer):
    """One commitment's committed GPU-hours no work uses, and their cost."""

    option = serializers.CharField(help_text="the committed option, or the mix holding it")
    layer = serializers.CharField(
        allow_null=True, help_text="the mix's committed layer; null for an option alone"
    )
    committed_gpus = serializers.IntegerField(help_text="GPUs committed [GPUs]")
    committed_gpu_hours = serializers.FloatField(
        help_text="committed GPU-hours over months 1 … H [GPU-h]"
    )
    unused_gpu_hours_mean = serializers.FloatField(
        help_text="committed GPU-hours no work uses, mean over the paths [GPU-h]"
    )
    unused_gpu_hours_p90 = serializers.FloatField(
        help_text="committed GPU-hours no work uses, 90th percentile over the paths [GPU-h]"
    )
    unused_usd_mean = serializers.FloatField(
        help_text="what the unused hours cost, mean over the paths [USD]"
    )
    unused_usd_p90 = serializers.FloatField(
        help_text="what the unused hours cost, 90th percentile over the paths [USD]"
    )


class RunRiskSerializer(serializers.Serializer):
    """A succeeded run's risk figures, computed in its Monte Carlo blocks (not in the result)."""

    run = serializers.IntegerField(help_text="the run's id [id]")
    paths = serializers.IntegerField(help_text="Monte Carlo paths of the run [paths]")
    budget_usd = serializers.FloatField(
        allow_null=True, help_text="the budget asked about, null without one [USD]"
    )
    options = RiskOptionSerializer(many=True, help_text="per option, in the result's order")
    commitments = RiskCommitmentSerializer(
        many=True, help_text="per committed option or committed layer of a mix"
    )
