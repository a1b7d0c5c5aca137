"""factory_boy factories for catalog rows that tests build themselves (the shipped catalog comes
from ``load_catalog``)."""

from datetime import timedelta
from decimal import Decimal

import factory
from django.utils import timezone

from hardware.models import (
    DedicatedQuote,
    EgressTier,
    GpuModel,
    InstanceOffer,
    InstancePrice,
    Provider,
    PurchaseQuote,
    Region,
)


class GpuModelFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = GpuModel
        django_get_or_create = ("slug",)

    slug = factory.Sequence(lambda n: f"test-gpu-{n}")
    name = factory.LazyAttribute(lambda o: o.slug.upper())
    vendor = "NVIDIA"
    memory_gb = Decimal(80)
    memory_bandwidth_tb_s = Decimal("2.0")
    bf16_dense_tflops = Decimal(500)


class ProviderFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Provider
        django_get_or_create = ("slug",)

    slug = factory.Sequence(lambda n: f"cloud-{n}")
    name = factory.LazyAttribute(lambda o: o.slug.title())
    kind = Provider.Kind.GPU_CLOUD


class RegionFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Region

    provider = factory.SubFactory(ProviderFactory)
    code = factory.Sequence(lambda n: f"region-{n}")


class InstanceOfferFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = InstanceOffer

    provider = factory.SubFactory(ProviderFactory)
    instance_type = factory.Sequence(lambda n: f"gpu_8x_test_{n}")
    gpu = factory.SubFactory(GpuModelFactory)
    gpu_count = 8


class InstancePriceFactory(factory.django.DjangoModelFactory):
    """A current on-demand price stated today (not stale), loaded an hour ago."""

    class Meta:
        model = InstancePrice

    offer = factory.SubFactory(InstanceOfferFactory)
    region = factory.SubFactory(RegionFactory, provider=factory.SelfAttribute("..offer.provider"))
    billing = "on_demand"
    usd_per_hour = Decimal("16")
    stated_on = factory.LazyFunction(timezone.localdate)
    first_seen = factory.LazyFunction(lambda: timezone.now() - timedelta(hours=1))
    last_seen = factory.LazyAttribute(lambda o: o.first_seen)
    source_name = "test feed"


class EgressTierFactory(factory.django.DjangoModelFactory):
    """A provider's single open-ended egress tier."""

    class Meta:
        model = EgressTier

    provider = factory.SubFactory(ProviderFactory)
    up_to_tb = None
    usd_per_gb = Decimal("0.05")
    stated_on = factory.LazyFunction(timezone.localdate)


class QuoteFactory(factory.django.DjangoModelFactory):
    """What both kinds of quote have: eight-GPU servers of a test GPU, received (not
    demonstration data)."""

    class Meta:
        abstract = True

    server_description = "8x GPU server"
    gpu = factory.SubFactory(GpuModelFactory)
    gpus_per_server = 8


class DedicatedQuoteFactory(QuoteFactory):
    """A received (not demonstration) dedicated-server quote."""

    class Meta:
        model = DedicatedQuote

    vendor = "Test Hosting"
    reference = factory.Sequence(lambda n: f"TQ-D-{n}")
    usd_per_server_month = Decimal("10000")
    term_months = 12


class PurchaseQuoteFactory(QuoteFactory):
    """A received (not demonstration) purchase quote."""

    class Meta:
        model = PurchaseQuote

    vendor = "Test Reseller"
    reference = factory.Sequence(lambda n: f"TQ-P-{n}")
    capex_usd_per_server = Decimal("200000")
    server_kw = Decimal("10")
    lead_time_months = 2
