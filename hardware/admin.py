"""Admin for the catalog: every model with search and filters.

Prices, egress tiers and quotes keep a history of every change (who, when, what), readable from
each object's "History" page; hand edits made here are recorded with the signed-in user.
"""

from collections.abc import Callable
from decimal import Decimal
from typing import Any

from django import forms
from django.contrib import admin, messages
from django.db import models
from django.db.models import QuerySet
from django.http import HttpRequest
from django.utils import timezone
from django.utils.html import format_html_join
from django.utils.safestring import mark_safe
from simple_history.admin import SimpleHistoryAdmin

from accounts.roles import CATALOG_EDITOR, user_has_role
from hardware.display.figures import decimal_text
from hardware.models import (
    Assumption,
    DedicatedQuote,
    EgressTier,
    GpuModel,
    InstanceOffer,
    InstancePrice,
    Provider,
    PurchaseQuote,
    RefreshRun,
    RefreshStatus,
    Region,
    TokenPrice,
)
from hardware.names import hidden_characters_error
from hardware.references import SlugRenameCheckedForm
from hardware.refresh.pipeline import (
    CATALOG_MOVED,
    RefreshError,
    RefreshLocked,
    refresh_run_approve,
    refresh_run_diff,
    refresh_run_discard,
)
from hardware.selectors import egress_tiers_problem


class VisibleTextForm:
    """A catalog form's check that no text typed holds invisible format characters
    (``hardware.names.hidden_characters``), each refused at its field."""

    def clean(self) -> dict[str, Any]:
        cleaned: dict[str, Any] = super().clean()  # type: ignore[misc]
        for name, value in list(cleaned.items()):
            if isinstance(value, str) and (problem := hidden_characters_error(value)):
                self.add_error(name, problem)  # type: ignore[attr-defined]
        return cleaned


class PlainDecimalField(forms.DecimalField):
    """A stored Decimal in its field as plain digits, never in exponent form (``0E-10`` as
    ``0``, ``23.9200000000`` as ``23.92``)."""

    def prepare_value(self, value: Any) -> Any:
        if isinstance(value, Decimal):
            return decimal_text(value)
        return super().prepare_value(value)


class VisibleTextAdmin(admin.ModelAdmin):
    """An admin whose forms refuse text holding invisible format characters
    (``VisibleTextForm``), its Decimals written as plain digits (``PlainDecimalField``)."""

    formfield_overrides = {models.DecimalField: {"form_class": PlainDecimalField}}

    def get_form(
        self, request: HttpRequest, obj: Any = None, change: bool = False, **kwargs: Any
    ) -> Any:
        form = super().get_form(request, obj, change=change, **kwargs)
        return type(form.__name__, (VisibleTextForm, form), {})


@admin.register(GpuModel)
class GpuModelAdmin(VisibleTextAdmin):
    form = SlugRenameCheckedForm
    list_display = (
        "slug",
        "name",
        "vendor",
        "memory_gb",
        "bf16_dense_tflops",
        "fp4_dense_tflops",
        "tdp_w",
    )
    list_filter = ("vendor", "form_factor")
    search_fields = ("slug", "name", "vendor")


@admin.register(Provider)
class ProviderAdmin(VisibleTextAdmin):
    form = SlugRenameCheckedForm
    list_display = ("slug", "name", "kind", "website", "egress_note")
    list_filter = ("kind",)
    search_fields = ("slug", "name")
    # a website typed without its scheme is an https one (as Django 6 will assume)
    formfield_overrides = {models.URLField: {"assume_scheme": "https"}}


@admin.register(Region)
class RegionAdmin(VisibleTextAdmin):
    list_display = ("code", "provider", "name", "geography")
    list_filter = ("geography", "provider")
    list_select_related = ("provider",)
    search_fields = ("code", "name", "provider__slug")


@admin.register(InstanceOffer)
class InstanceOfferAdmin(VisibleTextAdmin):
    list_display = (
        "instance_type",
        "provider",
        "gpu",
        "gpu_confirmed",
        "gpu_count",
        "vcpus",
        "memory_gib",
        "host",
    )
    list_filter = ("provider", "gpu", "gpu_count", "gpu_confirmed")
    list_select_related = ("provider", "gpu")
    search_fields = ("instance_type", "host", "provider__slug", "gpu__slug", "gpu__name")
    autocomplete_fields = ("gpu",)


class FlaggedFilter(admin.SimpleListFilter):
    """Prices flagged as looking wrong (a non-empty ``flag``), or not."""

    title = "flagged"
    parameter_name = "flagged"

    def lookups(
        self, request: HttpRequest, model_admin: "admin.ModelAdmin[Any]"
    ) -> tuple[tuple[str, str], ...]:
        return (("yes", "flagged"), ("no", "not flagged"))

    def queryset(self, request: HttpRequest, queryset: QuerySet) -> QuerySet:
        if self.value() == "yes":
            return queryset.exclude(flag="")
        if self.value() == "no":
            return queryset.filter(flag="")
        return queryset


@admin.register(InstancePrice)
class InstancePriceAdmin(VisibleTextAdmin, SimpleHistoryAdmin):
    list_display = (
        "offer",
        "region",
        "billing",
        "usd_per_hour",
        "usd_per_gpu_hour",
        "zone",
        "stated_on",
        "first_seen",
        "last_seen",
        "flag",
    )
    list_filter = (
        "billing",
        "offer__provider",
        "offer__gpu",
        "offer__gpu_count",
        FlaggedFilter,
        "stated_on",
        "first_seen",
    )
    list_select_related = ("offer", "offer__provider", "region")
    search_fields = ("offer__instance_type", "region__code", "offer__provider__slug", "zone")
    readonly_fields = ("usd_per_gpu_hour",)
    raw_id_fields = ("offer", "region")
    ordering = ("usd_per_gpu_hour",)
    date_hierarchy = "first_seen"
    history_list_display = ("usd_per_hour", "zone", "last_seen")


class EgressTierForm(forms.ModelForm):
    """An egress tier; a new tier, another bound or another provider must leave the providers'
    tiers in the format's form (``hardware.selectors.egress_tiers_problem``)."""

    class Meta:
        model = EgressTier
        fields = ["provider", "up_to_tb", "usd_per_gb", "scope", "source", "stated_on"]

    def clean(self) -> dict[str, Any]:
        cleaned = super().clean() or self.cleaned_data
        provider, bound = cleaned.get("provider"), cleaned.get("up_to_tb")
        tier = self.instance if self.instance.pk else None
        if provider is None or "up_to_tb" in self.errors:
            return cleaned
        if tier is None or {"up_to_tb", "provider"} & set(self.changed_data):
            problem = egress_tiers_problem(provider=provider, adding=[bound], excluding=tier)
            if problem:
                self.add_error("up_to_tb", problem)
        if tier is not None and tier.provider_id != provider.pk:
            problem = egress_tiers_problem(provider=tier.provider, excluding=tier)
            if problem:
                self.add_error("provider", f"The tier cannot leave {tier.provider.slug}: {problem}")
        return cleaned


@admin.register(EgressTier)
class EgressTierAdmin(VisibleTextAdmin, SimpleHistoryAdmin):
    form = EgressTierForm
    list_display = ("provider", "up_to_tb", "usd_per_gb", "scope", "stated_on")
    list_filter = ("provider",)
    list_select_related = ("provider",)
    search_fields = ("provider__slug", "provider__name", "scope", "source")
    history_list_display = ("up_to_tb", "usd_per_gb")


class QuoteAdmin(VisibleTextAdmin, SimpleHistoryAdmin):
    """What the admin of either kind of quote shows: who quoted what, the kind's own figures
    (``quote_columns``), and whether the quote still stands."""

    list_filter = ("status", "is_demo", "gpu", "vendor")
    list_select_related = ("gpu",)
    search_fields = ("vendor", "reference", "server_description", "notes", "gpu__slug")


def quote_columns(*figures: str) -> tuple[str, ...]:
    """A quote list's columns, with ``figures`` between who quoted what and its standing."""
    return (
        "vendor", "reference", "gpu", "gpus_per_server", *figures,
        "valid_until", "status", "is_demo",
    )  # fmt: skip


@admin.register(DedicatedQuote)
class DedicatedQuoteAdmin(QuoteAdmin):
    list_display = quote_columns("usd_per_server_month", "term_months")
    history_list_display = ("status", "usd_per_server_month")


@admin.register(PurchaseQuote)
class PurchaseQuoteAdmin(QuoteAdmin):
    list_display = quote_columns("capex_usd_per_server", "server_kw", "lead_time_months")
    history_list_display = ("status", "capex_usd_per_server")


@admin.register(RefreshRun)
class RefreshRunAdmin(admin.ModelAdmin):
    """Price refreshes: read-only records; a held run is approved or discarded from the list."""

    list_display = (
        "started_at", "source", "provider", "status", "rows_read", "rows_rejected",
        "prices_added", "prices_changed", "prices_vanished", "feed_stated_on",
    )  # fmt: skip
    list_filter = ("status", "source", "provider")
    search_fields = ("provider", "feed_name", "feed_sha256")
    actions = ("approve", "discard")

    def get_readonly_fields(self, request: HttpRequest, obj: RefreshRun | None = None) -> list[str]:
        return [f.name for f in RefreshRun._meta.fields] + ["diff"]

    @admin.display(description="diff (while held: what approving changes)")
    def diff(self, run: RefreshRun) -> str:
        changes = refresh_run_diff(run=run)
        lines = [
            f"{c['kind']}: {c['instance_type']} {c['region']} {c['billing']}: "
            f"{c['old_usd_per_hour'] or '-'} -> {c['new_usd_per_hour'] or '-'} USD/h"
            for c in changes["prices"]
        ] + [
            f"egress tier up to {e['up_to_tb'] or 'no limit'} TB {e['kind']}: "
            f"{e['old_usd_per_gb'] or '-'} -> {e['new_usd_per_gb'] or '-'} USD/GB"
            for e in changes["egress_tiers"]
        ]
        return format_html_join(mark_safe("<br>"), "{}", ((line,) for line in lines)) or "-"

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def _each_held(
        self,
        request: HttpRequest,
        queryset: QuerySet[RefreshRun],
        service: Callable[..., RefreshRun],
        done: str,
    ) -> None:
        for run in queryset:
            try:
                run = service(run_id=run.pk)
            except (RefreshError, RefreshLocked) as exc:
                self.message_user(request, str(exc), level=messages.WARNING)
                continue
            if service is refresh_run_approve and run.status == RefreshStatus.HELD:
                self.message_user(request, f"{run}: {CATALOG_MOVED}", level=messages.WARNING)
                continue
            self.message_user(request, f"{run}: {done}")

    @admin.action(description="Approve the selected held refreshes (apply them as staged)")
    def approve(self, request: HttpRequest, queryset: QuerySet[RefreshRun]) -> None:
        self._each_held(request, queryset, refresh_run_approve, "approved")

    @admin.action(description="Discard the selected held refreshes")
    def discard(self, request: HttpRequest, queryset: QuerySet[RefreshRun]) -> None:
        self._each_held(request, queryset, refresh_run_discard, "discarded")


# --- token prices and sourced assumptions (hardware/models/sourced_figures.py) ------------------------


class CatalogEditorAdmin(VisibleTextAdmin, SimpleHistoryAdmin):
    """A table catalog editors edit in the admin by their role (accounts.roles), without model
    permissions of their own; every edit is kept in the history with who made it, and no text
    typed holds invisible format characters (``VisibleTextForm``)."""

    def _edits(self, request: HttpRequest) -> bool:
        return request.user.is_active and user_has_role(request.user, CATALOG_EDITOR)

    def get_changeform_initial_data(self, request: HttpRequest) -> dict[str, Any]:
        """A figure added by hand is first and last seen now."""
        now = timezone.now()
        return {"first_seen": now, "last_seen": now, **super().get_changeform_initial_data(request)}

    def has_module_permission(self, request: HttpRequest) -> bool:
        return self._edits(request) or super().has_module_permission(request)

    def has_view_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return self._edits(request) or super().has_view_permission(request, obj)

    def has_add_permission(self, request: HttpRequest) -> bool:
        return self._edits(request) or super().has_add_permission(request)

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return self._edits(request) or super().has_change_permission(request, obj)

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return self._edits(request) or super().has_delete_permission(request, obj)


@admin.register(TokenPrice)
class TokenPriceAdmin(CatalogEditorAdmin):
    list_display = (
        "provider",
        "model",
        "usd_per_million_input_tokens",
        "usd_per_million_output_tokens",
        "stated_on",
        "first_seen",
        "last_seen",
        "flag",
    )
    list_filter = ("provider", "stated_on", "first_seen")
    search_fields = ("provider", "model", "notes", "source")
    history_list_display = ("usd_per_million_input_tokens", "usd_per_million_output_tokens")


@admin.register(Assumption)
class AssumptionAdmin(CatalogEditorAdmin):
    list_display = ("key", "value", "unit", "applies_to", "stated_on", "confidence", "first_seen")
    list_filter = ("confidence", "applies_to")
    search_fields = ("key", "applies_to", "unit", "source", "notes")
    history_list_display = ("value", "stated_on")
