"""The question form of ``/ask/``: what you run, in your own units, each field with a one-line
explanation and a default; no engine words. A bad answer is a message at its field."""

from __future__ import annotations

import math
from typing import Any

from django import forms
from django.conf import settings

from costapp.ask.presets import MODEL_PRESETS, preset_get
from costapp.scenarios.growth import (
    agree,
    growth_words,
    monthly_from_yearly,
    percent_a_month,
    typed_note,
)
from costapp.tco import hidden_characters_error

CERTAINTY = {
    "high": (0.9, 1.1),
    "medium": (0.7, 1.3),
    "low": (0.5, 1.6),
}
"""How sure of the demand, as the low and high of a triangular demand multiplier around 1."""

CUSTOM = "custom"
MODEL_CHOICES = [
    *((p.key, p.label) for p in MODEL_PRESETS),
    (CUSTOM, "another model (give its size)"),
]
"""The models the form offers by name, and "another model" (its size given)."""
PROVIDER_KINDS = {
    "hyperscaler": "hyperscale clouds (AWS, Azure, Google, Oracle)",
    "gpu-cloud": "GPU clouds (Lambda, CoreWeave, …)",
    "marketplace": "marketplaces (hosts' listings)",
}
"""The kinds of provider a lead may consider (the catalog's ``Provider.kind``), in words."""
REGIONS = {
    "any": "anywhere",
    "americas": "the Americas",
    "europe": "Europe",
    "asia-pacific": "Asia-Pacific",
}
"""Where the offers may be (``Region.geography``), in words."""
COMMITMENT_YEARS = {
    "1": "1 year",
    "3": "3 years",
    "5": "5 years (priced when the horizon is 60 months or more)",
}
"""The commitment terms a lead may consider, in words."""
SURE = {
    "average": "on average (mean NPV)",
    "tail": "in the worst tenth of futures",
}
"""How sure the answer must be: the objective of the mix's sizing."""
MAX_CLUSTER_GPUS = 10_000_000
INFERENCE_BYTES = 2 * 1.2  # FP16 weights plus 20 % for the KV cache and activations [GB per B]
SERVER_GPUS = 8


def _number(label: str, help_text: str, *, initial: Any = None, low: float = 0) -> forms.Field:
    return forms.FloatField(
        required=False, label=label, help_text=help_text, initial=initial, min_value=low
    )


def _percent(label: str, help_text: str, initial: Any = None) -> forms.Field:
    return forms.FloatField(
        required=False, label=label, help_text=help_text, initial=initial, min_value=0,
        max_value=100,
    )  # fmt: skip


def _ticks(label: str, choices: dict[str, str], css: str, help_text: str) -> forms.Field:
    """Boxes to tick, every one ticked at first."""
    return forms.MultipleChoiceField(
        required=False, label=label, initial=list(choices), choices=list(choices.items()),
        widget=forms.CheckboxSelectMultiple(attrs={"class": css}), help_text=help_text,
    )  # fmt: skip


def _month(label: str, help_text: str, initial: Any = None) -> forms.Field:
    return forms.IntegerField(
        required=False, label=label, help_text=help_text, initial=initial, min_value=1
    )


class QuestionForm(forms.Form):
    """A buying question: serve a model, train or fine-tune one, a steady fleet (one or more),
    how long, how sure, which GPUs."""

    months = forms.IntegerField(
        label="How long (months)",
        initial=36,
        min_value=1,
        max_value=120,
        help_text="the whole period to pay for, from the first month of work",
    )
    certainty = forms.ChoiceField(
        label="How sure of the demand",
        initial="medium",
        choices=[
            (key, f"{key}: between {low:g}× and {high:g}× the figures below")
            for key, (low, high) in CERTAINTY.items()
        ],
        help_text="the range the answer's P10–P90 covers; default: medium",
    )
    gpus = forms.MultipleChoiceField(
        label="GPU models to consider",
        initial=["h100-sxm"],
        choices=[],
        widget=forms.CheckboxSelectMultiple(attrs={"class": "gpu-choices"}),
        help_text="up to three; each is priced every way the catalog can; default: H100 SXM5",
    )

    egress_tb_per_month = forms.FloatField(
        required=False,
        label="Data sent out to the internet (TB a month)",
        initial=0,
        min_value=0,
        help_text="egress, priced in each provider's tiers where the catalog knows them",
    )

    growth_per_year = forms.FloatField(
        required=False,
        label="Growth a year (%)",
        help_text="how much the work grows each year, or give it a month below: 50 means 1.5 "
        "times a year, 3.437 % a month; default: no growth",
    )
    growth_per_month = forms.FloatField(
        required=False,
        label="or: growth a month (%)",
        help_text="how much the work grows each month, or give it a year above: 3.437 means "
        "50 % a year, (1 + 3.437 %)^12 − 1; the page converts it; default: no growth",
    )
    sure = forms.ChoiceField(
        label="How sure the answer must be",
        initial="average",
        choices=list(SURE.items()),
        help_text="the worst tenth sizes the plan for bad futures, not the average one; default: on "
        "average",
    )
    undone_percent = _percent(
        "Chance of leaving work undone you accept (%)",
        "the share of futures in which a plan may leave some work undone",
        initial=0,
    )
    kinds = _ticks(
        "Providers to consider", PROVIDER_KINDS, "kind-choices", "by kind; default: all three"
    )
    region = forms.ChoiceField(
        label="Where",
        initial="any",
        choices=list(REGIONS.items()),
        help_text="the part of the world the offers must be in; default: anywhere",
        error_messages={"invalid_choice": "Choose a region: the Americas, Europe, Asia-Pacific "
                        "or anywhere (not “%(value)s”)."},
    )  # fmt: skip
    max_price_age_days = forms.IntegerField(
        required=False,
        label="Oldest price to trust (days)",
        min_value=1,
        help_text="default: any age, every stale price said in the answer (the catalog is a "
        "dated snapshot)",
    )
    owned_gpus = forms.IntegerField(
        required=False,
        label="GPUs already owned",
        min_value=0,
        max_value=MAX_CLUSTER_GPUS,
        initial=0,
        help_text="a layer of the plan that costs only its running cost",
    )
    owned_gpu = forms.ChoiceField(
        required=False, label="Which GPU they are", choices=[],
        help_text="default: the first GPU model considered",
    )  # fmt: skip
    owned_usd_per_month = _number(
        "Their running cost a month (USD)", "power, space, staff: all of it", initial=0
    )
    commitments = _ticks(
        "Commitments to consider", COMMITMENT_YEARS, "commitment-choices",
        "each term at its cheapest acceptable committed price; the mix commits for 3 years when "
        "3 is ticked; default: all three",
    )  # fmt: skip
    discount_percent = _percent(
        "Discount rate a year (%)",
        "your cost of money: a dollar paid later counts for less in the NPV",
    )
    bridge = forms.BooleanField(
        required=False,
        initial=True,
        label="Rent while bought servers arrive",
        help_text="at the cheapest fitting on-demand price of the same GPU; default: on",
    )

    serve = forms.BooleanField(
        required=False, label="Serve a model", initial=True,
        help_text="a model answering requests, priced by the tokens it generates; default: on",
    )  # fmt: skip
    serve_model = forms.ChoiceField(
        required=False,
        label="Model",
        choices=MODEL_CHOICES,
        initial="llama-3.1-70b",
        help_text="its size comes from its model card; default: Llama 3.1 70B",
    )
    serve_params_billion = _number(
        "Model size (billions of parameters)", "only for another model; no default"
    )
    tokens_per_day = _number(
        "Generated tokens per day",
        "the answers' tokens, averaged over the month; no default: give it or requests per day",
    )
    requests_per_day = _number("or: requests per day", "with tokens per request below; no default")
    tokens_per_request = _number(
        "Generated tokens per request", "with requests per day; no default"
    )
    prompt_tokens = _number(
        "Prompt tokens per generated token",
        "what each answer reads; billed by hosted models",
        initial=1,
    )
    peak_to_average = _number(
        "Busiest hour against the average", "2 means the busiest hour has twice the traffic",
        initial=2, low=1,
    )  # fmt: skip
    peak_hours_per_day = forms.FloatField(
        required=False,
        label="Busiest hours a day",
        min_value=0.1,
        max_value=24,
        help_text="the hours each day traffic stands at its busiest; default 4 (at most 24 ÷ "
        "the busiest hour's ratio)",
    )
    serve_start = _month("Serving from month", "1 is the first month", initial=1)
    serve_end = _month("Serving until month", "default: the last month")

    train = forms.BooleanField(
        required=False, label="Train or fine-tune a model",
        help_text="runs that read a number of tokens, a number of times a year; default: off",
    )  # fmt: skip
    train_model = forms.ChoiceField(
        required=False,
        label="Model",
        choices=MODEL_CHOICES,
        initial="llama-3.1-70b",
        help_text="its size comes from its model card; default: Llama 3.1 70B",
    )
    train_params_billion = _number(
        "Model size (billions of parameters)", "only for another model; no default"
    )
    train_tokens_billion = _number(
        "Training tokens per run (billions)",
        "the tokens one run reads; no default: give it or the GPU-hours",
    )
    train_gpu_hours = _number(
        "or: GPU-hours per run", "when you know them, on the first GPU model; no default"
    )
    train_method = forms.ChoiceField(
        required=False,
        label="Training",
        choices=[
            ("lora", "adapters (LoRA): the base model frozen"),
            ("full", "full: every weight, with its optimizer state"),
        ],
        initial="lora",
        help_text="adapters hold no optimizer state for the whole model; default: adapters",
    )
    train_cluster_gpus = forms.IntegerField(
        required=False,
        label="GPUs a run uses at once",
        min_value=1,
        max_value=MAX_CLUSTER_GPUS,
        error_messages={"max_value": "At most 10,000,000 GPUs at once."},
        help_text="the cluster a run needs together; default: the fewest that hold the model",
    )
    train_days = _number(
        "or: days a run must finish in",
        "sets the GPUs at once: the run's GPU-hours over the days; default: no deadline",
    )
    failures = forms.BooleanField(
        required=False,
        initial=True,
        label="Failures stop runs",
        help_text="at the GPU's sourced time between failures, each run restarted from its last "
        "checkpoint; default: on",
    )
    checkpoint_minutes = _number("Checkpoint (minutes)", "one checkpoint written", initial=5)
    restart_minutes = _number(
        "Restart (minutes)", "from a failure until the run goes on", initial=20
    )
    runs_per_year = _number("Runs a year", "12 means one run a month while it lasts", initial=12)
    train_start = _month("Training from month", "1 is the first month", initial=1)
    train_end = _month("Training until month", "default: the last month")

    steady = forms.BooleanField(
        required=False, label="A steady fleet",
        help_text="GPUs kept busy whatever runs on them, when you know the count; default: off",
    )  # fmt: skip
    steady_gpus = _number("GPUs", "busy around the clock at the share below; no default")
    steady_utilization = forms.FloatField(
        required=False,
        label="How busy (0 to 1)",
        initial=0.7,
        min_value=0,
        max_value=1,
        help_text="0.7 means busy 70 % of the time",
    )

    def __init__(self, *args: Any, gpu_choices: list[tuple[str, str]], memory: dict[str, float],
                 **kwargs: Any) -> None:  # fmt: skip
        super().__init__(*args, **kwargs)
        gpus_field = self.fields["gpus"]
        assert isinstance(gpus_field, forms.MultipleChoiceField)
        gpus_field.choices = gpu_choices
        owned_field = self.fields["owned_gpu"]
        assert isinstance(owned_field, forms.ChoiceField)
        owned_field.choices = [("", "the first GPU model considered"), *gpu_choices]
        self.memory = memory
        self.discount_rate = settings.DISCOUNT_RATE
        self.fields["discount_percent"].initial = f"{100 * self.discount_rate:g}"

    @staticmethod
    def params_of(data: dict[str, Any], prefix: str) -> float | None:
        preset = preset_get(str(data.get(f"{prefix}_model") or ""))
        if preset is not None:
            return preset.params_billion
        return data.get(f"{prefix}_params_billion")

    def hidden_refused(self) -> bool:
        """Each field whose posted value holds a direction override or a zero-width character
        (``costapp.tco.hidden_characters_error``) shows that message alone, its value unused;
        whether any did."""
        refused = False
        for name in self.fields:
            key = self.add_prefix(name)
            raw = self.data.getlist(key) if hasattr(self.data, "getlist") else self.data.get(key)
            values = raw if isinstance(raw, list | tuple) else [raw]
            message = hidden_characters_error("".join(v for v in values if isinstance(v, str)))
            if message:
                self.errors[name] = self.error_class([f"M{message[1:]}."], renderer=self.renderer)
                self.cleaned_data.pop(name, None)
                refused = True
        return refused

    def clean(self) -> dict[str, Any]:  # noqa: C901 (one check per field, in the form's order)
        data = super().clean() or {}
        if self.hidden_refused():
            return data  # the other checks would read values the lead did not type
        months = data.get("months")
        if not (data.get("serve") or data.get("train") or data.get("steady")):
            raise forms.ValidationError("Say what you run: serve a model, train one, or a fleet.")
        gpus = data.get("gpus") or []
        if len(gpus) > 3:
            self.add_error("gpus", "Choose at most three GPU models.")
        self._clean_growth(data)
        if data.get("discount_percent") is not None:
            self.discount_rate = data["discount_percent"] / 100
        if not data.get("kinds") and "kinds" not in self.errors:
            self.add_error("kinds", "Choose at least one kind of provider.")
        if data.get("owned_gpus") and data.get("owned_usd_per_month") is None:
            self.add_error("owned_usd_per_month", "Give their running cost a month (0 or more).")
        for prefix in ("serve", "train"):
            if not data.get(prefix):
                continue
            if data.get(f"{prefix}_model") == CUSTOM and not data.get(f"{prefix}_params_billion"):
                self.add_error(f"{prefix}_params_billion", "Give the model's size.")
            start, end = data.get(f"{prefix}_start") or 1, data.get(f"{prefix}_end")
            if months and start > months:
                self.add_error(f"{prefix}_start", f"Must be within the {months} months.")
            if end is not None and end < start:
                self.add_error(f"{prefix}_end", f"Must not be before month {start}.")
            if months and end is not None and end > months:
                self.add_error(f"{prefix}_end", f"Must be within the {months} months.")
        if data.get("serve"):
            self._clean_serving(data, gpus)
        if data.get("train"):
            if not (data.get("train_tokens_billion") or data.get("train_gpu_hours")):
                self.add_error(
                    "train_tokens_billion", "Give the tokens a run reads, or its GPU-hours."
                )
            if not data.get("runs_per_year"):
                self.add_error("runs_per_year", "Give how many runs a year, more than 0.")
        if data.get("steady") and not data.get("steady_gpus"):
            self.add_error("steady_gpus", "Give the number of GPUs, more than 0.")
        return data

    def _clean_growth(self, data: dict[str, Any]) -> None:
        """Growth given a year or a month (``costapp.scenarios.growth``, the builder's rule):
        each above −100 %; both given, they must say the same growth."""
        per_year, per_month = data.get("growth_per_year"), data.get("growth_per_month")
        if per_year is not None and per_year <= -100:
            self.add_error(
                "growth_per_year", "Must be above −100 % a year (−100 % leaves no work)."
            )
        elif per_month is not None and per_month <= -100:
            self.add_error(
                "growth_per_month", "Must be above −100 % a month (−100 % leaves no work)."
            )
        elif (
            per_year is not None
            and per_month is not None
            and not agree(percent_a_month(per_month), per_year)
        ):
            self.add_error(
                "growth_per_month",
                f"Says {growth_words(percent_a_month(per_month))}, but the growth a year says "
                f"{growth_words(monthly_from_yearly(per_year))}: clear one of them.",
            )

    def growth_note(self) -> str:
        """The growth as typed, a month and a year (shown under the rate a month), the month
        first as the plan takes it (``costapp.scenarios.growth.typed_note``)."""
        month, year = self["growth_per_month"].value(), self["growth_per_year"].value()
        return typed_note(month, year, month_scale=percent_a_month(1))

    def _clean_serving(self, data: dict[str, Any], gpus: list[str]) -> None:
        per_day = data.get("tokens_per_day")
        if per_day is None and data.get("requests_per_day") and data.get("tokens_per_request"):
            per_day = data["requests_per_day"] * data["tokens_per_request"]
            data["tokens_per_day"] = per_day
        if not per_day and "tokens_per_day" not in self.errors:
            self.add_error(
                "tokens_per_day",
                "Give the generated tokens per day (more than 0), or requests per day and tokens "
                "per request.",
            )
        params = self.params_of(data, "serve")
        if params:
            need = params * INFERENCE_BYTES
            fits = [g for g in gpus if self.memory.get(g, 0) * SERVER_GPUS >= need]
            if gpus and not fits:
                largest = max(self.memory.get(g, 0) for g in gpus)
                self.add_error(
                    "serve_model" if data.get("serve_model") != CUSTOM else "serve_params_billion",
                    f"A {params:g}B model needs about {math.ceil(need):,} GB to serve: more than "
                    f"one server of {SERVER_GPUS} of the GPUs chosen holds "
                    f"({SERVER_GPUS} × {largest:g} GB).",
                )
