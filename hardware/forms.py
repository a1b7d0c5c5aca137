"""Forms of the catalog pages: create and edit quotes."""

from decimal import Decimal
from typing import Any

from django import forms

from hardware.models import DedicatedQuote, PurchaseQuote

DATE_INPUT = forms.DateInput(attrs={"type": "date"})


class QuoteForm(forms.ModelForm):
    """Checks the amounts field by field, so an error names the field (the database's own
    constraints would only name themselves)."""

    positive: tuple[str, ...] = ()
    not_negative: tuple[str, ...] = ()
    fractions: tuple[str, ...] = ()

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        for name, value in self.initial.items():
            if isinstance(value, Decimal):  # as written: 14600, 0, 2.5; not 0E-10 or 2.5000000000
                self.initial[name] = format(value.normalize(), "f")

    def clean(self) -> dict[str, Any]:
        super().clean()
        cleaned = self.cleaned_data
        for name in self.positive:
            value = cleaned.get(name)
            if value is not None and value <= 0:
                self.add_error(name, "must be more than 0")
        for name in self.not_negative:
            value = cleaned.get(name)
            if value is not None and value < 0:
                self.add_error(name, "must be 0 or more")
        for name in self.fractions:
            value = cleaned.get(name)
            if value is not None and not 0 <= value <= 1:
                self.add_error(name, "must be a fraction between 0 and 1")
        return cleaned


class DedicatedQuoteForm(QuoteForm):
    """A dedicated-server quote as the vendor stated it (USD per server-month, setup once)."""

    positive = ("usd_per_server_month",)
    not_negative = ("setup_usd", "included_egress_tb", "overage_usd_per_tb")

    class Meta:
        model = DedicatedQuote
        fields = DedicatedQuote.edit_fields()
        labels = {
            "gpu": "GPU model",
            "gpus_per_server": "GPUs per server",
            "usd_per_server_month": "USD per server-month",
            "setup_usd": "Setup [USD, once]",
            "term_months": "Term [months]",
            "included_egress_tb": "Included egress [TB/month]",
            "overage_usd_per_tb": "Egress overage [USD/TB]",
        }
        widgets = {"valid_until": DATE_INPUT, "notes": forms.Textarea(attrs={"rows": 3})}


class PurchaseQuoteForm(QuoteForm):
    """A purchase quote for servers to own (capex per server, power at load, lead time)."""

    positive = ("capex_usd_per_server", "server_kw")
    fractions = ("support_fraction_per_year",)

    class Meta:
        model = PurchaseQuote
        fields = PurchaseQuote.edit_fields()
        labels = {
            "gpu": "GPU model",
            "gpus_per_server": "GPUs per server",
            "capex_usd_per_server": "Capex [USD per server]",
            "server_kw": "Server power at load [kW]",
            "lead_time_months": "Lead time [months]",
            "support_fraction_per_year": "Support [fraction of capex per year]",
        }
        widgets = {"valid_until": DATE_INPUT, "notes": forms.Textarea(attrs={"rows": 3})}
