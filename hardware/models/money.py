"""How the catalog stores money."""

from decimal import Decimal
from typing import TypedDict


# Money: USD as Decimal with 10 decimal places (up to 10 integer digits).
class _MoneyDigits(TypedDict):
    max_digits: int
    decimal_places: int


MONEY: _MoneyDigits = {"max_digits": 20, "decimal_places": 10}


MONEY_QUANTUM = Decimal("1E-10")
