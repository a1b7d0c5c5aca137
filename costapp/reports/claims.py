"""Claims widely repeated about GPU costs, each tested with scenario documents.

Each claim has a short text with the arithmetic (``costapp/data/claims/<slug>.html``, shipped
with the project) and one scenario document per case (``<slug>--<case>.json``), plain documents of
docs/scenario-format.md that ``manage.py simulate`` and the API accept as they are.
"""

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

CLAIMS_DIR = Path(__file__).resolve().parent.parent / "data" / "claims"


@dataclass(frozen=True)
class ClaimCase:
    """One scenario document testing a claim."""

    slug: str  # the part after "--" in the file name
    label: str

    def path(self, claim_slug: str) -> Path:
        return CLAIMS_DIR / f"{claim_slug}--{self.slug}.json"


@dataclass(frozen=True)
class Claim:
    """A claim, its verdict in a few words, and the cases that test it."""

    slug: str
    claim: str
    verdict: str
    cases: tuple[ClaimCase, ...]

    @property
    def text_html(self) -> str:
        """The explanation with the arithmetic: trusted HTML shipped with the project."""
        return (CLAIMS_DIR / f"{self.slug}.html").read_text(encoding="utf-8")

    def document(self, case: ClaimCase) -> dict[str, Any]:
        """A case's scenario document."""
        return _read_json(case.path(self.slug))


CLAIMS: tuple[Claim, ...] = (
    Claim(
        "7b-fp16-needs-28gb",
        "A 7B model in FP16 needs 28 GB",
        "Fails: the weights take 14 GB (28 GB is FP32); memory fit, not 28 GB, sets the fleet.",
        (
            ClaimCase("serving", "Serving a 7B model on 16, 24 and 40 GB GPUs"),
            ClaimCase("training", "Full fine-tuning a 7B model: 112 GB of weights and state"),
        ),
    ),
    Claim(
        "dedicated-saves-half",
        "Dedicated servers save more than 50 % over three years",
        "Holds against hyperscaler on-demand at high utilization; fails against GPU-cloud "
        "prices and at low utilization.",
        (
            ClaimCase("high-utilization", "64 H100s, 90 % busy"),
            ClaimCase("low-utilization", "64 H100s, 30 % busy"),
        ),
    ),
    Claim(
        "egress-adds-20-40-pct",
        "Egress adds 20–40 % to a cloud bill",
        "Holds only for egress-heavy work: 34 % at 200 TB a month, 1 % at 5 TB.",
        (
            ClaimCase("light", "Light egress: 5 TB a month"),
            ClaimCase("heavy", "Heavy egress: 200 TB a month"),
        ),
    ),
)


def _read_json(path: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return data


def claim_get(slug: str) -> Claim | None:
    """A claim by slug, or None."""
    return next((claim for claim in CLAIMS if claim.slug == slug), None)
