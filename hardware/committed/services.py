"""Writes of the committed prices: the published committed prices
(``hardware/data/prices/committed/published.csv``) and Epoch AI's dated 1- and 3-year prices
(``hardware/data/prices/epoch_hardware_prices.csv``) as market observations.

``CommittedLoad.read`` parses both files (no database); ``CommittedLoad.apply`` writes them in the
caller's transaction, after the SkyPilot prices (an Epoch row is attached to an offer those
loaded); ``CommittedLoad.summaries`` gives the load report per file. Idempotent: loading the same
files twice changes nothing.
"""

from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime
from decimal import Decimal
from pathlib import Path

from django.db import transaction

from hardware.data_files import ALIASES_PATH, COMMITTED_PATH, EPOCH_PATH
from hardware.gpu_table import GpuRow
from hardware.models import GpuModel, InstanceOffer, MarketObservation, Region
from hardware.selectors import current_prices
from hardware.services import PriceLoadCounts, instance_prices_load, providers_ensure
from hardware.sources.aliases import read_aliases
from hardware.sources.committed import parse_committed_prices
from hardware.sources.common import ParseReport, PriceRow
from hardware.sources.epoch import CommittedObservation, parse_epoch_prices

OBSERVATION_FIELDS = (
    "gpu_id",
    "provider_id",
    "region_id",
    "offer_id",
    "usd_per_gpu_hour",
    "stated_on",
    "instance",
    "gpu_evidence",
    "source_sha256",
    "source_url",
)


@dataclass
class ObservationCounts:
    """What an observation load did."""

    created: int = 0
    updated: int = 0
    unchanged: int = 0
    attached: int = 0  # observations matched to an offer of the catalog
    market_only: int = 0  # kept as market observations: no offer of the catalog matches
    prices: PriceLoadCounts = field(default_factory=PriceLoadCounts)


def _offer_for(
    obs: CommittedObservation, offers: dict[tuple[str, str], list[InstanceOffer]]
) -> InstanceOffer | None:
    """The one offer of the catalog the observation is about: the provider's offers of the GPU
    priced in the region (the instance the row names, when it names one); none when there is
    no such offer or more than one."""
    found = offers.get((obs.provider, obs.region), [])
    found = [o for o in found if o.gpu.slug == obs.gpu_slug]
    if obs.aws_instance:
        found = [o for o in found if o.instance_type == obs.aws_instance]
    return found[0] if len(found) == 1 else None


@transaction.atomic
def market_observations_load(
    *,
    observations: list[CommittedObservation],
    source_name: str,
    source_sha256: str,
    observed_at: datetime,
) -> ObservationCounts:
    """Store each observation (one per file, line and billing; an equal one is left alone),
    attached to its offer where the catalog has one. For each attached offer, region and billing
    the latest observation becomes the offer's committed price (``instance_prices_load``:
    per GPU-hour times the offer's GPUs, stated on the observation's date)."""
    counts = ObservationCounts()
    if not observations:
        return counts
    providers = providers_ensure(slugs={o.provider for o in observations})
    existing_regions = {
        (r.provider.slug, r.code): r
        for r in Region.objects.filter(provider__in=list(providers.values())).select_related(
            "provider"
        )
    }
    for slug, code in sorted(
        {(o.provider, o.region) for o in observations} - existing_regions.keys()
    ):
        existing_regions[(slug, code)] = Region.objects.create(provider=providers[slug], code=code)
    offers: dict[tuple[str, str], list[InstanceOffer]] = {}
    for price in current_prices().filter(offer__provider__in=list(providers.values())):
        listed = offers.setdefault((price.offer.provider.slug, price.region.code), [])
        if price.offer not in listed:
            listed.append(price.offer)
    gpus = {g.slug: g for g in GpuModel.objects.all()}
    stored = {
        (o.line_no, o.billing): o for o in MarketObservation.objects.filter(source_name=source_name)
    }
    latest: dict[tuple[int, str, str], tuple[CommittedObservation, InstanceOffer]] = {}
    for obs in observations:
        offer = _offer_for(obs, offers)
        values = {
            "gpu_id": gpus[obs.gpu_slug].pk,
            "provider_id": providers[obs.provider].pk,
            "region_id": existing_regions[(obs.provider, obs.region)].pk,
            "offer_id": offer.pk if offer else None,
            "usd_per_gpu_hour": obs.usd_per_gpu_hour,
            "stated_on": obs.stated_on,
            "instance": obs.instance,
            "gpu_evidence": obs.gpu_evidence[:400],
            "source_sha256": source_sha256,
            "source_url": obs.source_url,
        }
        if offer is None:
            counts.market_only += 1
        else:
            counts.attached += 1
            price_key = (offer.pk, obs.region, obs.billing)
            if price_key not in latest or latest[price_key][0].stated_on <= obs.stated_on:
                latest[price_key] = (obs, offer)
        row = stored.get((obs.line_no, obs.billing))
        if row is None:
            row = MarketObservation(
                source_name=source_name, line_no=obs.line_no, billing=obs.billing, **values
            )
            row.full_clean()
            row.save()
            counts.created += 1
        elif any(getattr(row, name) != value for name, value in values.items()):
            for name, value in values.items():
                setattr(row, name, value)
            row.save(update_fields=[name.removesuffix("_id") for name in OBSERVATION_FIELDS])
            counts.updated += 1
        else:
            counts.unchanged += 1
    rows = [
        PriceRow(
            provider=obs.provider,
            instance_type=offer.instance_type,
            gpu_slug=offer.gpu.slug,
            gpu_count=offer.gpu_count,
            vcpus=offer.vcpus,
            memory_gib=offer.memory_gib,
            host=offer.host,
            region=obs.region,
            zone="",
            billing=obs.billing,
            usd_per_hour=(obs.usd_per_gpu_hour * offer.gpu_count).quantize(Decimal("1E-10")),
            line_no=obs.line_no,
            note=f"{obs.usd_per_gpu_hour} per GPU-hour x {offer.gpu_count} GPUs ({obs.source_url})"[
                :300
            ],
            stated_on=obs.stated_on,
            gpu_confirmed=offer.gpu_confirmed,
            gpu_evidence=offer.gpu_evidence,
        )
        for obs, offer in latest.values()
    ]
    counts.prices = instance_prices_load(
        rows=rows, source_name=source_name, source_sha256=source_sha256, observed_at=observed_at
    )
    return counts


@dataclass
class CommittedLoad:
    """The committed-price files of one ``load_catalog``: read, then applied, then reported."""

    committed_rows: list[PriceRow]
    committed_report: ParseReport
    observations: list[CommittedObservation]
    epoch_report: ParseReport
    committed_counts: PriceLoadCounts | None = None
    epoch_counts: ObservationCounts | None = None

    @classmethod
    def read(
        cls,
        *,
        gpu_rows: list[GpuRow],
        aliases_path: Path = ALIASES_PATH,
        committed_path: Path = COMMITTED_PATH,
        epoch_path: Path = EPOCH_PATH,
    ) -> "CommittedLoad":
        """Parse both files; raise ``SourceError`` when one cannot be read whole."""
        rows, report = parse_committed_prices(
            committed_path,
            gpu_names={r.name: r.slug for r in gpu_rows},
            file_name=f"prices/committed/{committed_path.name}",
        )
        aliases = read_aliases(aliases_path, source="epoch", known_slugs={r.slug for r in gpu_rows})
        observations, epoch_report = parse_epoch_prices(
            epoch_path, aliases=aliases, file_name=f"prices/{epoch_path.name}"
        )
        return cls(rows, report, observations, epoch_report)

    def apply(self, *, observed_at: datetime) -> None:
        """Write both files' prices (in the caller's transaction)."""
        self.committed_counts = instance_prices_load(
            rows=self.committed_rows,
            source_name=self.committed_report.file_name,
            source_sha256=self.committed_report.sha256,
            observed_at=observed_at,
        )
        self.epoch_counts = market_observations_load(
            observations=self.observations,
            source_name=self.epoch_report.file_name,
            source_sha256=self.epoch_report.sha256,
            observed_at=observed_at,
        )

    def summaries(self) -> Iterator[tuple[ParseReport, list[str]]]:
        """Per file, its parse report (with the rows the load refused) and what the load did."""
        if self.committed_counts is None or self.epoch_counts is None:
            raise RuntimeError("CommittedLoad.apply has not run")
        pc = self.committed_counts
        self.committed_report.rejections.extend(pc.rejections)
        yield (
            self.committed_report,
            [
                f"  {len(self.committed_rows)} prices (on-demand, 1-, 3- and 5-year commitments): "
                f"{pc.created} new, {pc.unchanged} unchanged; {pc.offers_created} new offers, "
                f"{pc.regions_created} new regions"
            ],
        )
        ec = self.epoch_counts
        self.epoch_report.rejections.extend(ec.prices.rejections)
        yield (
            self.epoch_report,
            [
                f"  {len(self.observations)} dated committed prices per GPU-hour: {ec.created} new, "
                f"{ec.updated} updated, {ec.unchanged} unchanged; {ec.attached} of an offer of "
                f"the catalog ({ec.prices.created} new committed prices, {ec.prices.unchanged} "
                f"unchanged), {ec.market_only} kept as market observations (no offer matches)"
            ],
        )
