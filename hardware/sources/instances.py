"""Cloud instance types whose GPUs a price feed does not state (``hardware/data/cloud_instances.csv``).

The Azure, GCP and Oracle feeds price meters and SKUs, not GPU servers: the table says which GPU
model, how many, and (where known) how many vCPUs and GiB of memory an instance type has, and how
its price is found in the feed:

- Azure: the instance type is the item's ``armSkuName``; ``price_key`` is empty.
- GCP: ``price_key`` is the GPU SKU's description before " running in" (``Nvidia Tesla A100
  GPU``) and ``family`` the prefix of its core and RAM SKUs (``A2``); the instance's hourly price
  is gpus x GPU price + vCPUs x core price + GiB x RAM price.
- Oracle: ``price_key`` is the part number of the GPU price, stated per GPU-hour.

The rows come from each provider's published instance-type documentation; ``note`` "same" repeats
the note above. An instance type missing from the table is rejected by the parsers, never guessed.
"""

from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path

from hardware.data_files import INSTANCES_PATH
from hardware.sources.common import (
    RowRejected,
    SourceError,
    count_or_none,
    decimal_or_none,
    read_csv,
    text,
)

COLUMNS = (
    "provider",
    "instance_type",
    "gpu_slug",
    "gpu_count",
    "vcpus",
    "memory_gib",
    "price_key",
    "family",
)


@dataclass(frozen=True)
class CloudInstance:
    """One instance type of a cloud: its GPUs, vCPUs and memory, and its key in the feed."""

    provider: str
    instance_type: str
    gpu_slug: str
    gpu_count: int
    vcpus: Decimal | None
    memory_gib: Decimal | None
    price_key: str
    family: str
    line_no: int


class InstanceTable:
    """The instance types of one provider, in file order."""

    def __init__(self, provider: str, instances: list[CloudInstance]):
        self.provider = provider
        self.instances = instances
        self.by_type = {i.instance_type: i for i in instances}

    def get(self, instance_type: str) -> CloudInstance | None:
        return self.by_type.get(instance_type)

    def with_price_key(self, price_key: str) -> list[CloudInstance]:
        return [i for i in self.instances if i.price_key == price_key]


def read_instances(
    path: Path = INSTANCES_PATH, *, provider: str, known_slugs: set[str] | None = None
) -> InstanceTable:
    """Read the instance rows of ``provider``; raise ``SourceError`` naming the line on a bad row.

    With ``known_slugs``, a row naming a slug outside the GPU table breaks the table.
    """
    _, rows = read_csv(path, COLUMNS)
    instances: list[CloudInstance] = []
    seen: set[str] = set()
    for line_no, raw in rows:
        if text(raw, "provider") != provider:
            continue
        instance_type, slug = text(raw, "instance_type"), text(raw, "gpu_slug")
        where = f"{path.name}:{line_no}"
        if not instance_type or not slug:
            raise SourceError(f"{where}: instance_type and gpu_slug are required")
        if instance_type in seen:
            raise SourceError(f"{where}: instance_type {instance_type!r} appears twice")
        seen.add(instance_type)
        if known_slugs is not None and slug not in known_slugs:
            raise SourceError(f"{where}: gpu_slug {slug!r} is not in the GPU table")
        try:
            gpu_count = count_or_none(raw, "gpu_count")
            vcpus = decimal_or_none(raw, "vcpus")
            memory_gib = decimal_or_none(raw, "memory_gib")
        except RowRejected as exc:
            raise SourceError(f"{where}: {exc.detail}") from None
        if not gpu_count:
            raise SourceError(f"{where}: gpu_count must be a whole number above 0")
        instances.append(
            CloudInstance(
                provider, instance_type, slug, gpu_count, vcpus, memory_gib,
                text(raw, "price_key"), text(raw, "family"), line_no,
            )
        )  # fmt: skip
    return InstanceTable(provider, instances)
