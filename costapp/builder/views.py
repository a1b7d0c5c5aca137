"""The scenario builder's pages: a new scenario, the edit of one by its owner, its JSON view, the
offer picker, and duplicating and sharing a scenario.

The builder's forms (``costapp.builder``) build the scenario document; the engine checks it when
it is saved (``costapp.scenarios.services.scenario_create`` / ``scenario_update``) and its
messages are shown at the fields their paths name; an invalid document stores nothing. Another
user's shared scenario may be read and duplicated but not edited or shared (403); a private one
answers 404.
"""

import json
from typing import Any

from django.contrib import messages
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.utils import timezone
from django.views.decorators.http import require_GET, require_http_methods

from accounts.decorators import analyst_required
from costapp.builder.aggregate import ScenarioBuilder
from costapp.builder.catalog import CatalogChoices, catalog_choices
from costapp.builder.offers import instance_need, picker_offers, picker_workloads
from costapp.models import Scenario
from costapp.scenarios import catalog as scenario_catalog
from costapp.scenarios import selectors, services
from costapp.tco import FieldError, ScenarioError, loads, schema
from hardware.display.figures import plain_number, quantity_text
from hardware.selectors import offer_confidences


def _visible(request: HttpRequest, pk: int) -> Scenario:
    return get_object_or_404(selectors.scenarios_visible(user=request.user), pk=pk)


def _owned(request: HttpRequest, pk: int, doing: str) -> Scenario:
    """The scenario if ``request.user`` owns it; 404 when they may not read it, 403 when they
    may read but not change it."""
    found = _visible(request, pk)
    if found.owner_id != request.user.pk:
        raise PermissionDenied(f"Only the owner of a scenario may {doing}.")
    return found


def _document_text(document: Any) -> str:
    return json.dumps(document, indent=2, ensure_ascii=False)


def _offer_standing(builder: ScenarioBuilder) -> dict[int, Any]:
    """Per option form (by its index in the formset): what the catalog says today of the offer
    it names (prices with source, date, staleness, flags, confidence), or ``False`` when it has no current
    price; options naming no offer are left out."""
    found: dict[int, Any] = {}
    for index, form in enumerate(builder.options.forms):
        reference = form.offer_reference()
        if reference is None:
            continue
        provider, instance, region = reference
        terms = scenario_catalog.offer_terms(provider=provider, instance=instance, region=region)
        if terms is None:
            found[index] = False
            continue
        standing = terms["standing"]
        rates: dict[str, Any] = dict(terms["usd_per_gpu_hour"])
        confidences = offer_confidences(provider=provider, instance=instance, region=region)
        found[index] = {
            "gpu": terms["gpu"],
            "gpu_confirmed": standing["gpu_confirmed"],
            "gpu_evidence": standing["gpu_evidence"],
            "egress_known": standing["egress_known"],
            "egress_note": standing["egress_note"],
            "prices": [
                {
                    "billing": billing,
                    "usd_per_gpu_hour": rates.get(billing),
                    "confidence": confidences.get(billing),
                    **price,
                }
                for billing, price in sorted(standing["prices"].items())
            ],
        }
    return found


def _render(
    request: HttpRequest,
    *,
    builder: ScenarioBuilder,
    scenario: Scenario | None,
    json_text: str,
    json_errors: list[FieldError] | None = None,
    json_open: bool = False,
) -> HttpResponse:
    standing = _offer_standing(builder)
    _estimates_show(builder)
    context = {
        "builder": builder,
        "scenario": scenario,
        "json_text": json_text,
        "json_errors": json_errors or [],
        "json_open": json_open or bool(json_errors),
        "option_rows": [
            (form, standing.get(index)) for index, form in enumerate(builder.options.forms)
        ],
        "stale_days": _stale_days(),
        "max_workloads": schema.MAX_WORKLOADS,
        # each catalog picker's list once for the page, not once per row
        "lists": builder.workloads.empty_form.lists() + builder.options.empty_form.lists(),
    }
    return render(request, "builder/builder.html", context)


def _estimates_show(builder: ScenarioBuilder) -> None:
    """Each estimate the engine makes for an empty workload field (the decode and prefill rates
    from the model's parameters, the busiest hours from the peak), as that field's placeholder and
    in its help, so a person sees the figure the run will use before leaving it empty."""
    if not builder.scenario.is_bound or not builder.is_valid():
        return
    estimates = services.workload_estimates(document=builder.document())
    for index, form in enumerate(builder.rows("workloads")):
        for name, value in estimates.get(index, {}).items():
            field = form.fields.get(name)
            if field is None:
                continue
            number = float(value)
            if number >= 1e6:
                figure = quantity_text(number)
            else:
                figure = f"{number:,.0f}" if number >= 100 else plain_number(number, 3)
            field.widget.attrs["placeholder"] = f"{figure} (estimate)"
            field.help_text = f"{field.help_text} Left empty, the run uses the estimate {figure}."
            form[name].help_text = field.help_text  # a bound field copies it when first made


def _stale_days() -> int:
    from django.conf import settings

    return int(settings.PRICE_STALE_DAYS)


def _save(
    request: HttpRequest, *, scenario: Scenario | None, document: Any, meta: dict[str, Any]
) -> Scenario:
    """Create or update the scenario (``ScenarioError``: nothing stored)."""
    name = document.get("name") if isinstance(document, dict) else None
    name = (name if isinstance(name, str) and name.strip() else "Untitled scenario")[:200]
    if scenario is None:
        return services.scenario_create(owner=request.user, name=name, document=document, **meta)
    return services.scenario_update(scenario=scenario, name=name, document=document, **meta)


def _builder_page(request: HttpRequest, scenario: Scenario | None) -> HttpResponse:
    choices: CatalogChoices = catalog_choices(today=timezone.localdate())
    if request.method == "GET":
        if scenario is None:
            builder = ScenarioBuilder(catalog=choices)
            return _render(request, builder=builder, scenario=None, json_text="")
        builder = ScenarioBuilder.from_document(
            scenario.document,
            catalog=choices,
            description=scenario.description,
            shared=scenario.shared,
        )
        return _render(
            request,
            builder=builder,
            scenario=scenario,
            json_text=_document_text(scenario.document),
        )
    action = request.POST.get("action", "save")
    if action in ("json-save", "json-open"):
        return _json_action(request, scenario, choices, action)
    builder = ScenarioBuilder(request.POST, catalog=choices)
    if not builder.is_valid():
        return _render(request, builder=builder, scenario=scenario, json_text="")
    document = builder.document()
    if action == "to-json":
        return _render(
            request,
            builder=builder,
            scenario=scenario,
            json_text=_document_text(document),
            json_open=True,
        )
    try:
        saved = _save(request, scenario=scenario, document=document, meta=builder.meta())
    except ScenarioError as exc:
        builder.engine_errors(exc.errors)
        return _render(
            request, builder=builder, scenario=scenario, json_text=_document_text(document)
        )
    messages.success(request, f"Scenario “{saved.name}” saved.")
    unsaved = builder.unsaved()
    if unsaved:
        messages.warning(
            request,
            "Values typed for another type or billing were not saved: " + "; ".join(unsaved) + ".",
        )
    return redirect("scenario", pk=saved.pk)


def _document_parse(text: str) -> dict[str, Any]:
    """The scenario document the JSON view's text holds: strict JSON (``costapp.tco.loads``) and
    an object; otherwise a ``ScenarioError`` saying what is wrong."""
    document = loads(text)
    if not isinstance(document, dict):
        raise ScenarioError([FieldError(None, "the scenario must be a JSON object")])
    return document


def _json_action(
    request: HttpRequest, scenario: Scenario | None, choices: CatalogChoices, action: str
) -> HttpResponse:
    """The JSON view's buttons: save the document as written, or open it in the form."""
    text = request.POST.get("document_json", "")
    description = scenario.description if scenario else ""
    shared = scenario.shared if scenario else False

    def original() -> ScenarioBuilder:
        if scenario is None:
            return ScenarioBuilder(catalog=choices)
        return ScenarioBuilder.from_document(
            scenario.document, catalog=choices, description=description, shared=shared
        )

    def refused(errors: list[FieldError]) -> HttpResponse:
        """The JSON view again with the text as written and what is wrong with it."""
        return _render(
            request, builder=original(), scenario=scenario, json_text=text, json_errors=errors
        )

    try:
        document = _document_parse(text)
    except ScenarioError as exc:
        return refused(exc.errors)
    if action == "json-open":
        builder = ScenarioBuilder.from_document(
            document, catalog=choices, description=description, shared=shared
        )
        if not builder.has_errors():
            try:
                services.scenario_document_check(document=document)
            except ScenarioError as exc:
                builder.is_valid()
                builder.engine_errors(exc.errors)
        return _render(request, builder=builder, scenario=scenario, json_text=text)
    try:
        saved = _save(
            request,
            scenario=scenario,
            document=document,
            meta={"description": description, "shared": shared},
        )
    except ScenarioError as exc:
        return refused(exc.errors)
    messages.success(request, f"Scenario “{saved.name}” saved from its JSON document.")
    return redirect("scenario", pk=saved.pk)


@analyst_required
@require_http_methods(["GET", "POST"])
def scenario_new(request: HttpRequest) -> HttpResponse:
    """The builder for a new scenario of the signed-in user."""
    return _builder_page(request, None)


@analyst_required
@require_http_methods(["GET", "POST"])
def scenario_edit(request: HttpRequest, pk: int) -> HttpResponse:
    """The builder showing a scenario, for its owner."""
    return _builder_page(request, _owned(request, pk, "edit it"))


def _confirm(request: HttpRequest, scenario: Scenario, **context: Any) -> HttpResponse:
    return render(request, "builder/confirm.html", {"scenario": scenario, **context})


@analyst_required
@require_http_methods(["GET", "POST"])
def scenario_duplicate(request: HttpRequest, pk: int) -> HttpResponse:
    """Make a private copy of a scenario the user may read, owned by the user (GET: the page
    asking to confirm it; the scenario page's button posts at once)."""
    found = _visible(request, pk)
    if request.method == "GET":
        return _confirm(
            request,
            found,
            action="duplicate",
            question=f"Make a private copy of “{found.name}”, owned by you?",
            button="Make a copy",
        )
    copy = services.scenario_duplicate(scenario=found, owner=request.user)
    messages.success(request, f"“{copy.name}” is your private copy; edit it as you like.")
    return redirect("scenario", pk=copy.pk)


@analyst_required
@require_http_methods(["GET", "POST"])
def scenario_share(request: HttpRequest, pk: int) -> HttpResponse:
    """Share a scenario with every role (viewers read it), or make it private again (its owner only; GET: the
    page asking to confirm it)."""
    found = _owned(request, pk, "share it")
    if request.method == "GET":
        return _confirm(
            request,
            found,
            action="share",
            question=(
                f"“{found.name}” is shared with every role. Make it private?"
                if found.shared
                else f"Share “{found.name}” with every role? Everyone with a role may read it "
                "and its runs, analysts may copy it; no one else may change it."
            ),
            button="Make private" if found.shared else "Share",
            share_value="" if found.shared else "on",
        )
    shared = request.POST.get("shared") == "on"
    services.scenario_update(scenario=found, shared=shared)
    messages.success(
        request,
        "The scenario is now shared with every role." if shared else "The scenario is now private.",
    )
    return redirect("scenario", pk=found.pk)


@analyst_required
@require_GET
def builder_offers(request: HttpRequest) -> HttpResponse:
    """The offer picker (an htmx fragment): the current prices of the option's GPU in its
    billing, first those that fit the option (egress pricing known, the GPUs the workloads need
    together in one instance: ``costapp.builder.offers``), then the others, each by price; each
    with its source and date and its flags, and a button to use it."""
    prefix = request.GET.get("prefix", "")
    gpu = request.GET.get(f"{prefix}-gpu") or request.GET.get("workloads-0-gpu")
    gpu = gpu or schema.DEFAULT_GPU
    billing = request.GET.get(f"{prefix}-billing") or "on_demand"
    need = instance_need(picker_workloads(request.GET), gpu)
    prices, need = picker_offers(gpu=gpu, billing=billing, need=need)
    context = {
        "prices": prices,
        "need": need,
        "gpu": gpu,
        "billing": billing,
        "prefix": prefix,
        "stale_days": _stale_days(),
    }
    return render(request, "builder/_offers.html", context)
