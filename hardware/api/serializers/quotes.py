"""Dedicated-server and purchase quotes."""

from decimal import Decimal

from hardware.api.serializers.common import (
    CatalogSerializer,
    CurrencyField,
    gpu_field,
    must_be_positive,
)
from hardware.models import DedicatedQuote, PurchaseQuote

QUOTE_COMMON = {
    "vendor": {"help_text": "who quoted"},
    "reference": {"help_text": "the vendor's quote number"},
    "server_description": {"help_text": "the server as quoted"},
    "gpus_per_server": {"help_text": "[GPUs per server]", "min_value": 1},
    "valid_until": {"help_text": "last day the quote holds [date]"},
    "status": {"help_text": "where the quote stands with procurement"},
    "notes": {"help_text": "free text"},
    "is_demo": {"help_text": "demonstration data, not a real quote"},
}


class DedicatedQuoteSerializer(CatalogSerializer):
    """A vendor's offer to lease dedicated GPU servers by the month."""

    gpu = gpu_field()
    currency = CurrencyField()

    class Meta:
        model = DedicatedQuote
        fields = ["id", *DedicatedQuote.edit_fields(), "is_demo", "currency"]
        extra_kwargs = {
            **QUOTE_COMMON,
            "usd_per_server_month": {"help_text": "[USD per server-month], each month of the term"},
            "setup_usd": {"help_text": "[USD] once, for the whole order", "min_value": 0},
            "term_months": {"help_text": "[months]", "min_value": 1},
            "included_egress_tb": {
                "help_text": "[TB/month] of egress included for the whole order",
                "min_value": 0,
            },
            "overage_usd_per_tb": {
                "help_text": "[USD/TB] beyond the included egress",
                "min_value": 0,
            },
        }

    def validate_usd_per_server_month(self, value: Decimal) -> Decimal:
        must_be_positive(value, "usd_per_server_month")
        return value


class PurchaseQuoteSerializer(CatalogSerializer):
    """A reseller's offer to sell GPU servers to own and host."""

    gpu = gpu_field()
    currency = CurrencyField()

    class Meta:
        model = PurchaseQuote
        fields = ["id", *PurchaseQuote.edit_fields(), "is_demo", "currency"]
        extra_kwargs = {
            **QUOTE_COMMON,
            "capex_usd_per_server": {"help_text": "[USD per server], once"},
            "server_kw": {"help_text": "server power at load [kW]"},
            "lead_time_months": {"help_text": "order to delivery [months]"},
            "support_fraction_per_year": {
                "help_text": "yearly support contract [fraction of capex per year], 0 to 1",
                "min_value": 0,
                "max_value": 1,
            },
        }

    def validate_capex_usd_per_server(self, value: Decimal) -> Decimal:
        must_be_positive(value, "capex_usd_per_server")
        return value

    def validate_server_kw(self, value: Decimal) -> Decimal:
        must_be_positive(value, "server_kw")
        return value
