"""Writes an AWS Price List bulk offer file (``AmazonEC2`` ``index.json``) of a chosen size.

The layout is the real one (``formatVersion``, ``products`` keyed by SKU with ``attributes``, then
``terms.OnDemand`` and ``terms.Reserved`` keyed by SKU and offer term code, each term with
``priceDimensions`` and ``termAttributes``), pretty-printed like the published file. Products mix
GPU and non-GPU instance types, Linux and Windows, shared and dedicated tenancy, used capacity and
capacity reservations priced $0, in several regions; every SKU has an on-demand term and the
twelve reserved terms (1 and 3 years; standard and convertible; no, partial and all upfront).

The writer streams: one product or term at a time, so a 1 GB file costs no memory. It returns
the prices a correct parser must read from the file (shared-tenancy Linux GPU instances in use:
on-demand, and the standard no-upfront 1- and 3-year rates), computed here from the values it
writes, not by any parser.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path
from typing import TextIO

# (instance type, GPUs): GPU types the parser knows; other types are drawn from families x sizes.
GPU_TYPES = [
    ("p5.48xlarge", 8),
    ("p5e.48xlarge", 8),
    ("p4d.24xlarge", 8),
    ("p4de.24xlarge", 8),
    ("p3.2xlarge", 1),
    ("p3.16xlarge", 8),
    ("g5.xlarge", 1),
    ("g5.48xlarge", 8),
    ("g6.xlarge", 1),
    ("g6e.12xlarge", 4),
]
OTHER_FAMILIES = ["c5", "c6i", "c7g", "m5", "m6a", "m7i", "r6i", "r7g", "t3", "x2idn", "i4i"]
SIZES = ["medium", "large", "xlarge", "2xlarge", "4xlarge", "8xlarge", "16xlarge", "metal"]
REGIONS = [
    ("us-east-1", "US East (N. Virginia)"),
    ("us-east-2", "US East (Ohio)"),
    ("us-west-1", "US West (N. California)"),
    ("us-west-2", "US West (Oregon)"),
    ("ca-central-1", "Canada (Central)"),
    ("sa-east-1", "South America (Sao Paulo)"),
    ("eu-west-1", "EU (Ireland)"),
    ("eu-west-2", "EU (London)"),
    ("eu-west-3", "EU (Paris)"),
    ("eu-central-1", "EU (Frankfurt)"),
    ("eu-north-1", "EU (Stockholm)"),
    ("eu-south-1", "EU (Milan)"),
    ("ap-northeast-1", "Asia Pacific (Tokyo)"),
    ("ap-northeast-2", "Asia Pacific (Seoul)"),
    ("ap-northeast-3", "Asia Pacific (Osaka)"),
    ("ap-southeast-1", "Asia Pacific (Singapore)"),
    ("ap-southeast-2", "Asia Pacific (Sydney)"),
    ("ap-south-1", "Asia Pacific (Mumbai)"),
    ("ap-east-1", "Asia Pacific (Hong Kong)"),
    ("me-south-1", "Middle East (Bahrain)"),
    ("af-south-1", "Africa (Cape Town)"),
    ("il-central-1", "Israel (Tel Aviv)"),
]
SYSTEMS = ["Linux", "Windows", "RHEL", "SUSE", "Red Hat Enterprise Linux with HA", "Ubuntu Pro"]
SOFTWARE = ["NA", "SQL Std", "SQL Web", "SQL Ent"]
TENANCIES = ["Shared", "Dedicated", "Host"]
CAPACITIES = ["Used", "UnusedCapacityReservation", "AllocatedCapacityReservation"]
WANTED = ("Linux", "NA", "Shared", "Used")
RESERVED = [
    (length, offering, purchase)
    for length in ("1yr", "3yr")
    for offering in ("standard", "convertible")
    for purchase in ("No Upfront", "Partial Upfront", "All Upfront")
]
HOURS_CODE = "6YS6EN2CT7"
UPFRONT_CODE = "2TG2D8R56U"
ON_DEMAND_CODE = "JRTCKXETXF"


@dataclass
class OfferFile:
    """What was written: sizes, counts and the prices a parser must find."""

    path: Path
    bytes_written: int = 0
    products: int = 0
    gpu_products: int = 0
    # (instance type, region code, billing) -> USD per instance-hour, as written
    expected: dict[tuple[str, str, str], Decimal] = field(default_factory=dict)


def _sku(rng: random.Random) -> str:
    return "".join(rng.choice("ABCDEFGHJKLMNPQRSTUVWXYZ23456789") for _ in range(16))


def _money(value: float) -> str:
    return f"{value:.10f}"


def _product_json(sku: str, attributes: dict) -> str:
    product = {"sku": sku, "productFamily": "Compute Instance", "attributes": attributes}
    return json.dumps(product, indent=2)


def _dimension(sku: str, term: str, code: str, description: str, unit: str, usd: str) -> dict:
    dimension = {
        "rateCode": f"{sku}.{term}.{code}",
        "description": description,
        "beginRange": "0",
        "endRange": "Inf",
        "unit": unit,
        "pricePerUnit": {"USD": usd},
        "appliesTo": [],
    }
    if unit == "Quantity":
        del dimension["beginRange"], dimension["endRange"]
    return dimension


def _term(sku: str, term: str, dimensions: list[dict], attributes: dict) -> dict:
    return {
        "offerTermCode": term,
        "sku": sku,
        "effectiveDate": "2026-11-01T00:00:00Z",
        "priceDimensions": {d["rateCode"]: d for d in dimensions},
        "termAttributes": attributes,
    }


class _Writer:
    def __init__(self, handle: TextIO):
        self.handle = handle
        self.bytes = 0

    def write(self, text: str) -> None:
        self.handle.write(text)
        self.bytes += len(text.encode())


def _indent(text: str, spaces: int) -> str:
    return text.replace("\n", "\n" + " " * spaces)


def write_offer_file(path: Path, *, target_bytes: int, seed: int = 0) -> OfferFile:
    """Write a bulk offer file of about ``target_bytes`` at ``path``; return what it holds."""
    rng = random.Random(seed)
    out = OfferFile(path=path)
    # The SKUs and their facts are drawn first (small: ~100 bytes each), then written twice.
    per_sku_bytes = 14_400  # product ~1.2 kB, on-demand ~0.7 kB, 12 reserved terms ~12.5 kB
    count = max(8, target_bytes // per_sku_bytes)
    others = [f"{family}.{size}" for family in OTHER_FAMILIES for size in SIZES]
    seen: set[tuple] = set()
    # (sku, instance type, GPUs, region, location, (system, software, tenancy, capacity), USD)
    skus: list[tuple[str, str, int, str, str, tuple[str, str, str, str], float]] = []
    collisions = 0
    while len(skus) < count:
        if collisions > 10_000:
            raise ValueError(f"{target_bytes} bytes need more distinct products than drawn")
        gpu = len(skus) % 10 == 0  # a tenth of the products are GPU instances
        if gpu:
            instance_type, gpus = GPU_TYPES[rng.randrange(len(GPU_TYPES))]
        else:
            instance_type, gpus = others[rng.randrange(len(others))], 0
        region, location = REGIONS[rng.randrange(len(REGIONS))]
        if rng.random() < 0.3:
            variant = WANTED
        else:
            variant = (
                rng.choice(SYSTEMS), rng.choice(SOFTWARE),
                rng.choice(TENANCIES), rng.choice(CAPACITIES),
            )  # fmt: skip
        key = (instance_type, region, variant)
        if key in seen:  # one SKU per (type, region, variant), as in the real file
            collisions += 1
            continue
        collisions = 0
        seen.add(key)
        usd = 0.0 if "Reservation" in variant[3] else round(rng.uniform(0.05, 120.0), 4)
        skus.append((_sku(rng), instance_type, gpus, region, location, variant, usd))
    with open(path, "w", encoding="utf-8") as handle:
        writer = _Writer(handle)
        writer.write(
            '{\n  "formatVersion" : "v1.0",\n  "disclaimer" : "synthetic offer file",\n'
            '  "offerCode" : "AmazonEC2",\n  "version" : "20261101000000",\n'
            '  "publicationDate" : "2026-11-01T00:00:00Z",\n  "products" : {\n'
        )
        for number, (sku, instance_type, gpus, region, location, variant, _usd) in enumerate(skus):
            operating_system, software, tenancy, capacity = variant
            usage = "BoxUsage" if tenancy == "Shared" else "DedicatedUsage"
            if capacity != "Used":
                usage = "Reservation"
            operation = "RunInstances" if operating_system == "Linux" else "RunInstances:0002"
            attributes = {
                "servicecode": "AmazonEC2",
                "location": location,
                "locationType": "AWS Region",
                "instanceType": instance_type,
                "currentGeneration": "Yes",
                "instanceFamily": "GPU instance" if gpus else "General purpose",
                "vcpu": str(8 * max(gpus, 1)),
                "physicalProcessor": "AMD EPYC 7R13 Processor",
                "memory": f"{64 * max(gpus, 1)} GiB",
                "storage": "EBS only",
                "networkPerformance": "Up to 25 Gigabit",
                "processorArchitecture": "64-bit",
                "tenancy": tenancy,
                "operatingSystem": operating_system,
                "licenseModel": "No License required",
                "usagetype": f"{usage}:{instance_type}",
                "operation": operation,
                "capacitystatus": capacity,
                "preInstalledSw": software,
                "regionCode": region,
            }
            if gpus:
                attributes["gpu"] = str(gpus)
            separator = ",\n" if number + 1 < len(skus) else "\n"
            writer.write(f'    "{sku}" : ' + _indent(_product_json(sku, attributes), 4) + separator)
            out.products += 1
            if gpus and variant == WANTED:
                out.gpu_products += 1
        writer.write('  },\n  "terms" : {\n    "OnDemand" : {\n')
        for number, (sku, instance_type, gpus, region, _, variant, usd) in enumerate(skus):
            term = _term(
                sku,
                ON_DEMAND_CODE,
                [
                    _dimension(
                        sku, ON_DEMAND_CODE, HOURS_CODE,
                        f"${usd} per On Demand {variant[0]} {instance_type} Instance Hour",
                        "Hrs", _money(usd),
                    )
                ],
                {},
            )  # fmt: skip
            separator = ",\n" if number + 1 < len(skus) else "\n"
            body = _indent(json.dumps({f"{sku}.{ON_DEMAND_CODE}": term}, indent=2), 6)
            writer.write(f'      "{sku}" : ' + body + separator)
            if gpus and variant == WANTED:
                out.expected[(instance_type, region, "on_demand")] = Decimal(_money(usd))
        writer.write('    },\n    "Reserved" : {\n')
        for number, (sku, instance_type, gpus, region, _, variant, usd) in enumerate(skus):
            terms = {}
            for index, (length, offering, purchase) in enumerate(RESERVED):
                code = f"R{index:02d}{sku[:7]}"
                discount = (0.62 if length == "1yr" else 0.41) + (
                    0.08 if offering == "convertible" else 0.0
                )
                hourly = 0.0 if purchase == "All Upfront" else usd * discount
                if purchase == "Partial Upfront":
                    hourly /= 2
                dimensions = [
                    _dimension(
                        sku, code, HOURS_CODE,
                        f"{variant[0]}/UNIX (Amazon VPC), {instance_type} reserved instance applied",
                        "Hrs", _money(hourly),
                    )
                ]  # fmt: skip
                if purchase != "No Upfront":
                    upfront = usd * discount * 8760 * (1 if length == "1yr" else 3)
                    dimensions.append(
                        _dimension(
                            sku, code, UPFRONT_CODE, "Upfront Fee", "Quantity", f"{upfront:.0f}"
                        )
                    )
                attributes = {
                    "LeaseContractLength": length,
                    "OfferingClass": offering,
                    "PurchaseOption": purchase,
                }
                terms[f"{sku}.{code}"] = _term(sku, code, dimensions, attributes)
                if (
                    gpus
                    and variant == WANTED
                    and (offering, purchase)
                    == (
                        "standard",
                        "No Upfront",
                    )
                ):
                    billing = "commit_1y" if length == "1yr" else "commit_3y"
                    out.expected[(instance_type, region, billing)] = Decimal(_money(hourly))
            separator = ",\n" if number + 1 < len(skus) else "\n"
            writer.write(f'      "{sku}" : ' + _indent(json.dumps(terms, indent=2), 6) + separator)
        writer.write("    }\n  }\n}\n")
    out.bytes_written = writer.bytes
    return out
