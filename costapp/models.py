"""Scenarios and simulation runs.

A :class:`Scenario` is a scenario document (docs: scenario-format.md) saved by its owner. A
:class:`SimulationRun` prices one scenario on the workers: it freezes the normalised document with
every catalog price resolved (``inputs``), so that the same inputs always give the same result,
and keeps the result document once the run has succeeded. The row is the truth the pages and the
API read; nothing waits on a task.
"""

import json
from typing import Any

from django.conf import settings
from django.db import models


class ExactJSONField(models.TextField):
    """A JSON value stored as its text, so it reads back exactly as written.

    PostgreSQL's ``jsonb`` reorders keys and turns ``-0.0`` into ``0``; a result document must read
    back bit for bit as the engine wrote it (the same bytes as ``manage.py simulate --json``), and
    a scenario document as its owner wrote it. Non-finite numbers are refused on the way in.
    """

    # The value types django-stubs' plugin gives the field (any JSON value, not TextField's str).
    _pyi_private_set_type: Any
    _pyi_private_get_type: Any

    def from_db_value(self, value: str | None, expression: Any, connection: Any) -> Any:
        return None if value is None else json.loads(value)

    def to_python(self, value: Any) -> Any:
        return value

    def get_prep_value(self, value: Any) -> str | None:
        return None if value is None else json.dumps(value, allow_nan=False)

    def value_to_string(self, obj: Any) -> str:
        return self.get_prep_value(self.value_from_object(obj)) or ""


class Scenario(models.Model):
    """A scenario document saved by its owner: private unless ``shared`` (then every role may
    read it; only the owner may change it or start runs)."""

    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="scenarios"
    )
    name = models.CharField(max_length=200)
    description = models.TextField(blank=True)
    shared = models.BooleanField(default=False)
    document = ExactJSONField(help_text="the scenario document as its owner wrote it")
    created = models.DateTimeField(auto_now_add=True)
    updated = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-created", "-id"]
        indexes = [models.Index(fields=["owner", "shared"])]

    def __str__(self) -> str:
        return self.name


class SimulationRun(models.Model):
    """One pricing of a scenario on the workers: its frozen inputs, its state and its result.

    ``inputs`` is the normalised document with every default filled in and every catalog price
    resolved (``gpus``: the GPU figures used), frozen when the run was created; a re-run copies the
    last run's inputs unless asked to reprice. ``progress`` [percent] rises as the blocks of paths
    land; a succeeded run's result never changes.
    """

    class Status(models.TextChoices):
        QUEUED = "queued"
        RUNNING = "running"
        SUCCEEDED = "succeeded"
        FAILED = "failed"
        CANCELLED = "cancelled"

    ACTIVE = (Status.QUEUED, Status.RUNNING)

    scenario = models.ForeignKey(Scenario, on_delete=models.CASCADE, related_name="runs")
    status = models.CharField(
        max_length=16, choices=Status.choices, default=Status.QUEUED, db_index=True
    )
    progress = models.PositiveSmallIntegerField(default=0, help_text="percent, 0–100")
    seed = models.PositiveBigIntegerField(default=0)
    paths = models.PositiveIntegerField(default=0)
    document_sha256 = models.CharField(
        max_length=64, help_text="hash of the scenario document the inputs were frozen from"
    )
    inputs = ExactJSONField(null=True, help_text="the normalised document, catalog prices frozen")
    gpus = ExactJSONField(null=True, help_text="GPU figures used, by slug")
    normalize_warnings = ExactJSONField(default=list)
    catalog_warnings = ExactJSONField(default=list)
    sources = ExactJSONField(
        default=list,
        blank=True,
        help_text="the result's sources (format 1.2): the catalog figures in inputs, judged at creation",
    )
    inputs_copied_from = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    result = ExactJSONField(null=True, help_text="the result document (scenario-format.md)")
    monthly_breakdown_usd = ExactJSONField(
        null=True, help_text="option name -> category -> H + 1 monthly amounts [USD]"
    )
    cost_curves = ExactJSONField(
        null=True,
        help_text="cost against utilization per option (costapp.tco.curves), computed at the finish",
    )
    sizing_bands = ExactJSONField(
        null=True,
        help_text=(
            "per sizing sweep, the P10 and P90 of each candidate's NPV over the paths "
            "(costapp.tco.sizing.sweeps_bands), computed at the finish; null without paths"
        ),
    )
    error = models.TextField(blank=True)
    engine_version = models.CharField(max_length=32, blank=True)
    attempts = models.PositiveIntegerField(
        default=0, help_text="times a worker started (or restarted) the run"
    )
    resumed = models.DateTimeField(
        null=True,
        blank=True,
        help_text="when the run was last resumed after showing no sign of life (its worker lost)",
    )
    units = ExactJSONField(
        default=list,
        help_text="the block tasks of the run, fixed when it is created: [kind, unit, blocks]",
    )
    created = models.DateTimeField(auto_now_add=True)
    started = models.DateTimeField(null=True, blank=True)
    finished = models.DateTimeField(null=True, blank=True)
    heartbeat = models.DateTimeField(
        null=True, blank=True, help_text="last sign of life: start, a block landing, the merge"
    )
    merge_started = models.DateTimeField(null=True, blank=True)
    merge_owner = models.CharField(
        max_length=64,
        blank=True,
        help_text="who holds the merge's claim: the id of the task merging (or of one merge call)",
    )
    resumed_at_merge = models.BooleanField(
        default=False, help_text="whether the last resume took over a merge its worker lost"
    )

    class Meta:
        ordering = ["-created", "-id"]
        constraints = [
            models.CheckConstraint(
                condition=models.Q(progress__lte=100), name="simulationrun_progress_at_most_100"
            )
        ]

    def __str__(self) -> str:
        return f"run {self.pk} of {self.scenario_id} ({self.status})"


class RunBlock(models.Model):
    """The results of one block task of a running run, kept until the run's merge.

    ``kind`` names the sort of block (``montecarlo``); ``unit`` numbers the task among the run's
    tasks of that kind. One row per (run, kind, unit): a redelivered task finds its row and adds
    nothing. The block results are numpy arrays (``.npz`` bytes, exact), kept in Redis when there
    is a broker (``payload`` then empty) and in ``payload`` when tasks run in-process.
    """

    run = models.ForeignKey(SimulationRun, on_delete=models.CASCADE, related_name="blocks")
    kind = models.CharField(max_length=32)
    unit = models.PositiveIntegerField()
    payload = models.BinaryField()
    created = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["run", "kind", "unit"], name="runblock_one_per_unit")
        ]

    def __str__(self) -> str:
        return f"{self.kind} unit {self.unit} of run {self.run_id}"


class RunRisk(models.Model):
    """A succeeded run's risk figures (``costapp.tco.risk``), computed in its Monte Carlo blocks
    and merged at its finish; kept beside the result, never in it (the result document's fields
    are the contract's). Runs without a simulation, and runs finished before these figures
    existed, have none.
    """

    run = models.OneToOneField(SimulationRun, on_delete=models.CASCADE, related_name="risk")
    figures = ExactJSONField(
        help_text=(
            "paths, options, cheapest_so_far (option -> share of paths per month 0 … H), "
            "commitments (unused committed GPU-hours and their cost, mean and P90)"
        )
    )
    sorted_totals = models.BinaryField(
        help_text="each option's total_usd on every path, ascending (.npz bytes, exact)"
    )

    def __str__(self) -> str:
        return f"risk of run {self.run_id}"


class Question(models.Model):
    """A buying question asked at ``/ask/`` in the user's own units (``answers``: the form's
    values), the plan it built (an ordinary ``scenario`` of the asker's, private) and its latest
    ``run``. ``notes``: what the plan says of itself (each option's family and GPU, the options
    the catalog could not price and why); ``changes``: "what would change the answer", computed
    once from the run's result (repeated engine runs) and kept."""

    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="questions"
    )
    created = models.DateTimeField(auto_now_add=True)
    answers = ExactJSONField(default=dict, help_text="the form's values, in the user's units")
    scenario = models.ForeignKey(
        Scenario, null=True, on_delete=models.SET_NULL, related_name="questions"
    )
    run = models.ForeignKey(
        SimulationRun, null=True, on_delete=models.SET_NULL, related_name="questions"
    )
    notes = ExactJSONField(default=dict, help_text="the plan's options and those left out")
    changes = ExactJSONField(null=True, help_text="what would change the answer, once computed")

    class Meta:
        ordering = ["-created", "-id"]

    def __str__(self) -> str:
        return f"question {self.pk} of {self.owner_id}"


class RunLink(models.Model):
    """A read-only link to one run for people without an account, made by the run's owner:
    ``/shared/<key>/`` shows the run's figures, charts and downloads and nothing else, until it
    is revoked or ``expires`` (``RUN_LINK_DAYS`` after it was made). Only a hash of the key is
    kept (the key is shown once, as an API token's)."""

    run = models.ForeignKey(SimulationRun, on_delete=models.CASCADE, related_name="links")
    key_sha256 = models.CharField(max_length=64, unique=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="run_links"
    )
    created = models.DateTimeField(auto_now_add=True)
    expires = models.DateTimeField()
    revoked = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created", "-id"]

    def __str__(self) -> str:
        return f"link {self.pk} to run {self.run_id}"


class RunRequest(models.Model):
    """A run started with an ``Idempotency-Key`` header: the same user's same key within
    ``RUN_IDEMPOTENCY_HOURS`` answers with this run instead of starting another, so a client may
    send the start of a run again after losing the answer."""

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="run_requests"
    )
    key = models.CharField(max_length=255)
    scenario = models.ForeignKey(Scenario, on_delete=models.CASCADE, related_name="run_requests")
    run = models.ForeignKey(
        SimulationRun, on_delete=models.CASCADE, null=True, related_name="requests"
    )
    created = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["user", "key"], name="run_request_one_per_key")
        ]

    def __str__(self) -> str:
        return f"run request {self.key!r} of user {self.user_id}"


class BudgetWatch(models.Model):
    """A budget its owner set on a saved scenario (a question's own scenario included) and the
    option they follow: after a price refresh that moves a price the plan rests on, and on beat's
    schedule, the plan is priced again on the day's catalog and a ``WatchEvent`` says what moved.
    ``run`` is the run the next event compares with (the latest priced)."""

    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="budget_watches"
    )
    scenario = models.ForeignKey(Scenario, on_delete=models.CASCADE, related_name="watches")
    option = models.CharField(max_length=200, help_text="the followed option's name")
    budget_usd = models.DecimalField(
        max_digits=16, decimal_places=2, help_text="the budget over the horizon [USD]"
    )
    budget_per_year_usd = ExactJSONField(
        default=list, help_text="optional budgets per year of the horizon, as decimal strings [USD]"
    )
    run = models.ForeignKey(
        SimulationRun, on_delete=models.PROTECT, related_name="+", help_text="compared with next"
    )
    created = models.DateTimeField(auto_now_add=True)
    active = models.BooleanField(default=True)

    class Meta:
        ordering = ["-created", "-id"]

    def __str__(self) -> str:
        return f"watch {self.pk} on scenario {self.scenario_id}"


class WatchEvent(models.Model):
    """What moved when a watched plan was priced again: the followed option's total and P90
    before and after against the budget, and whether the recommended option changed; or, for a
    plan whose new run failed, why. At most one per watch and price refresh."""

    class Status(models.TextChoices):
        PRICING = "pricing", "pricing"
        PRICED = "priced", "priced"
        FAILED = "failed", "failed"

    watch = models.ForeignKey(BudgetWatch, on_delete=models.CASCADE, related_name="events")
    trigger = models.CharField(max_length=12, help_text="refresh or schedule")
    refresh_run = models.ForeignKey(
        "hardware.RefreshRun", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    old_run = models.ForeignKey(SimulationRun, on_delete=models.PROTECT, related_name="+")
    new_run = models.ForeignKey(
        SimulationRun, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    status = models.CharField(max_length=8, choices=Status.choices, default=Status.PRICING)
    budget_usd = models.DecimalField(max_digits=16, decimal_places=2)
    old_total_usd = models.DecimalField(max_digits=16, decimal_places=2, null=True)
    new_total_usd = models.DecimalField(max_digits=16, decimal_places=2, null=True)
    old_p90_usd = models.DecimalField(max_digits=16, decimal_places=2, null=True)
    new_p90_usd = models.DecimalField(max_digits=16, decimal_places=2, null=True)
    years_over_budget = ExactJSONField(default=list, help_text="years (1 …) over their budget")
    old_cheapest = models.CharField(max_length=200, blank=True)
    new_cheapest = models.CharField(max_length=200, blank=True)
    message = models.TextField(blank=True)
    emailed = models.BooleanField(default=False)
    created = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created", "-id"]
        constraints = [
            models.UniqueConstraint(
                fields=["watch", "refresh_run"],
                condition=models.Q(refresh_run__isnull=False),
                name="one_event_per_watch_and_refresh",
            )
        ]

    def __str__(self) -> str:
        return f"event {self.pk} of watch {self.watch_id}"
