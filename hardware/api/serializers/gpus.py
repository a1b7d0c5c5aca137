"""GPU models, and a GPU's cheapest current prices."""

from decimal import Decimal
from typing import Any

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from hardware.api.serializers.common import (
    CatalogSerializer,
    GpuBriefSerializer,
    OfferBriefSerializer,
    ProviderBriefSerializer,
    RegionBriefSerializer,
)
from hardware.confidence import LEVELS, PriceConfidence, price_confidence
from hardware.models import GpuModel, InstancePrice

GPU_UNITS = {
    "slug": "identifier used by scenarios, e.g. h100-sxm5-80gb",
    "name": "name as sold",
    "vendor": "maker, e.g. NVIDIA",
    "form_factor": "board form, e.g. SXM5, PCIe",
    "memory_gb": "GPU memory [GB, 1e9 bytes]",
    "memory_bandwidth_tb_s": "memory bandwidth [TB/s]",
    "bf16_dense_tflops": "dense BF16 throughput [TFLOP/s]; null when not known or not supported",
    "fp16_dense_tflops": "dense FP16 throughput [TFLOP/s]; null when not known or not supported",
    "fp8_dense_tflops": "dense FP8 throughput [TFLOP/s]; null when not known or not supported",
    "fp4_dense_tflops": (
        "dense FP4 throughput [TFLOP/s]; null when not known or not supported; a catalog figure "
        "only (scenarios have no FP4 precision)"
    ),
    "tf32_dense_tflops": "dense TF32 throughput [TFLOP/s]; null when not known or not supported",
    "int8_dense_tops": "dense INT8 throughput [TOP/s]; null when not known or not supported",
    "fp32_tflops": "FP32 throughput [TFLOP/s]; null when not known",
    "tdp_w": "board power [W]",
    "interconnect": "GPU-to-GPU link, e.g. NVLink 4 900 GB/s",
    "release_date": "first availability [date]",
    "notes": "free text",
}


class GpuModelSerializer(CatalogSerializer):
    """A GPU model with its datasheet figures (dense throughput, no sparsity)."""

    class Meta:
        model = GpuModel
        fields = list(GPU_UNITS)
        extra_kwargs: dict[str, dict[str, Any]] = {
            name: {"help_text": text} for name, text in GPU_UNITS.items()
        }
        extra_kwargs["memory_gb"]["min_value"] = Decimal("0.01")
        extra_kwargs["memory_bandwidth_tb_s"]["min_value"] = Decimal("0.001")
        for name in (
            "bf16_dense_tflops",
            "fp16_dense_tflops",
            "fp8_dense_tflops",
            "fp4_dense_tflops",
            "tf32_dense_tflops",
            "int8_dense_tops",
            "fp32_tflops",
        ):
            extra_kwargs[name]["min_value"] = Decimal(0)


class CheapestPriceSerializer(serializers.Serializer):
    """The cheapest current price of a GPU from one provider in one billing model."""

    provider = ProviderBriefSerializer(
        source="offer.provider", read_only=True, help_text="who sells it"
    )
    billing = serializers.CharField(
        read_only=True, help_text="on_demand, spot, commit_1y, commit_3y, commit_5y"
    )
    usd_per_gpu_hour = serializers.DecimalField(
        max_digits=20, decimal_places=10, read_only=True, help_text="[USD per GPU-hour]"
    )
    usd_per_hour = serializers.DecimalField(
        max_digits=20, decimal_places=10, read_only=True, help_text="instance price [USD/h]"
    )
    offer = OfferBriefSerializer(read_only=True, help_text="the instance offer behind the price")
    region = RegionBriefSerializer(read_only=True, help_text="the region the price applies in")
    price_id = serializers.IntegerField(
        source="id", read_only=True, help_text="the price row (prices/{id}/) [id]"
    )
    first_seen = serializers.DateTimeField(read_only=True, help_text="[UTC]")
    last_seen = serializers.DateTimeField(read_only=True, help_text="[UTC]")
    confidence = serializers.SerializerMethodField(
        help_text="high, medium or low, judged at as_of (hardware.confidence)"
    )
    confidence_reasons = serializers.SerializerMethodField(
        help_text="why, in words, one reason a line"
    )

    def _judged(self, price: InstancePrice) -> PriceConfidence:
        return price_confidence(price, today=self.context.get("today"))

    @extend_schema_field({"type": "string", "enum": list(LEVELS)})
    def get_confidence(self, price: InstancePrice) -> str:
        return self._judged(price).level

    @extend_schema_field({"type": "array", "items": {"type": "string"}})
    def get_confidence_reasons(self, price: InstancePrice) -> list[str]:
        return list(self._judged(price).reasons)


class CheapestSerializer(serializers.Serializer):
    """``gpus/{slug}/cheapest/``: per provider and billing, the lowest USD per GPU-hour."""

    gpu = GpuBriefSerializer(read_only=True, help_text="the GPU model")
    as_of = serializers.DateField(read_only=True, help_text="the day the catalog is read at [UTC]")
    results = CheapestPriceSerializer(
        many=True, read_only=True, help_text="one row per provider and billing"
    )
