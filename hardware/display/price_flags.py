"""Why a price is flagged, in words a buyer reads: the catalog keeps each flag as its parser
wrote it (``InstancePrice.flag``, the API gives it so); the pages say it with the money written
as money (``hardware.display.figures.usd_rate``)."""

from __future__ import annotations

import re
from decimal import Decimal, InvalidOperation

from hardware.display.figures import usd_rate

# The flags of hardware/sources/skypilot.py (and of the refresh, which keeps the parser's note).
TENTH_OF_ON_DEMAND = re.compile(r"^spot is a tenth of on-demand (?P<usd>[0-9.]+): suspect$")
TENTH_OF_SIBLING = re.compile(
    r"^spot is a tenth of the on-demand price of (?P<sibling>\S+) \((?P<usd>[0-9.]+) for "
    r"(?P<gpus>\d+) GPUs\) in (?P<region>.+), and this instance has no on-demand price: suspect$"
)


def _money(text: str) -> str:
    try:
        return usd_rate(Decimal(text))
    except InvalidOperation:
        return text


def flag_words(flag: str) -> str:
    """A price's flag in words, the money as money: "suspect, as this spot price is exactly a
    tenth of the same instance's on-demand price ($9.49 an hour): …". A flag of another kind is
    given as written; an empty flag gives ``""``."""
    flag = (flag or "").strip()
    found = TENTH_OF_ON_DEMAND.match(flag)
    if found:
        return (
            "suspect, as this spot price is exactly a tenth of the same instance's on-demand "
            f"price ({_money(found['usd'])} an hour): a slip in the source would make it so"
        )
    found = TENTH_OF_SIBLING.match(flag)
    if found:
        gpus = int(found["gpus"])
        return (
            "suspect, as this spot price is exactly a tenth of the on-demand price of "
            f"{found['sibling']} ({_money(found['usd'])} an hour for {gpus} GPU"
            f"{'' if gpus == 1 else 's'}) in {found['region']}, and this instance has no "
            "on-demand price of its own"
        )
    return flag
