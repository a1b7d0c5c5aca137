"""How the catalog API's own field types appear in the OpenAPI schema (drf-spectacular)."""

from typing import Any

from drf_spectacular.extensions import OpenApiSerializerFieldExtension
from drf_spectacular.openapi import AutoSchema
from drf_spectacular.plumbing import build_basic_type
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import Direction


def _basic_type(kind: OpenApiTypes) -> dict[str, Any]:
    schema = build_basic_type(kind)
    if schema is None:  # only OpenApiTypes.NONE has no schema
        raise ValueError(f"{kind} has no schema")
    return schema


class BriefRelatedFieldExtension(OpenApiSerializerFieldExtension):
    """A related object: its slug (or id) in requests, its brief nested form in responses."""

    target_class = "hardware.api.serializers.BriefRelatedField"

    def map_serializer_field(self, auto_schema: AutoSchema, direction: Direction) -> dict[str, Any]:
        field = self.target
        if direction == "response":
            component = auto_schema.resolve_serializer(field.brief, direction)
            return {"allOf": [component.ref], "description": field.help_text or ""}
        kind = OpenApiTypes.INT if field.slug_field == "pk" else OpenApiTypes.STR
        return {**_basic_type(kind), "description": field.help_text or ""}


class RegionCodeFieldExtension(OpenApiSerializerFieldExtension):
    """A region: its code in requests, in brief in responses."""

    target_class = "hardware.api.serializers.RegionCodeField"

    def map_serializer_field(self, auto_schema: AutoSchema, direction: Direction) -> dict[str, Any]:
        field = self.target
        if direction == "response":
            from hardware.api.serializers import RegionBriefSerializer

            component = auto_schema.resolve_serializer(RegionBriefSerializer, direction)
            return {"allOf": [component.ref], "description": field.help_text or ""}
        return {
            **_basic_type(OpenApiTypes.STR),
            "maxLength": field.max_length,
            "description": field.help_text or "",
        }
