"""The FOCUS 1.2 rules as the FOCUS Validator publishes them (``focus_rules/model-1.2.json``, its
notice beside it), evaluated on an export without the validator (which needs Python 3.12).

Every active rule that can be checked from the data (``"Type": "Static"``; the validator skips
the ``Dynamic`` ones too) and whose keyword is MUST or MUST NOT is evaluated, when the export
meets its applicability criteria (:data:`SUPPORTED`), from the dataset's root rule down: a
rule's ``Requirement`` must hold on every row where its ``Condition`` and the conditions of the
rules that include it hold (the keyword only words the requirement, as in the validator); a
composite rule holds where all (``AND``) or any (``OR``) of the rules it names hold. A check of a
column the file does not have holds (its presence rule says whether it must be there). As in the
validator, a null breaks a requirement only when the requirement is about nulls (a value check,
a comparison or a format holds on a null), while a condition holds on a null only when it asks
for one or asks for "not" a value (``ChargeClass`` not "Correction" holds on a null, as the
specification's words mean; the validator's SQL would skip the row). The three rules whose checks contradict the specification's words are checked by those
words (:data:`OVERRIDDEN`).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import datetime
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa

RULES_FILE = Path(__file__).resolve().parent / "focus_rules" / "model-1.2.json"
ROOT_RULE = "CostAndUsage-D-000-M"

SUPPORTED = frozenset(
    {
        "ACCOUNT_NAMING_SUPPORTED",  # BillingAccountName: the scenario's name
        "COMMITMENT_DISCOUNT_SUPPORTED",  # commitments' Used and Unused rows
        "MULTIPLE_PRICING_CATEGORIES_SUPPORTED",  # Standard, Committed, Dynamic
        "NEGOTIATED_PRICING_SUPPORTED",  # ContractedCost, ContractedUnitPrice
        "PUBLIC_PRICE_LIST_SUPPORTED",  # ListCost, ListUnitPrice
        "USAGE_MEASUREMENT_SUPPORTED",  # ConsumedQuantity, ConsumedUnit
        "UNIT_PRICING_SUPPORTED",  # PricingQuantity, PricingUnit
        "SUB_ACCOUNT_SUPPORTED",  # one sub account per option
        "BILLING_BASED_ON_PROVISIONED_RESOURCES_SUPPORTED",  # ResourceId: the option
        "RESOURCE_TYPE_ASSIGNMENT_SUPPORTED",  # ResourceType: the option's type
        "REGION_SUPPORTED",  # RegionId, RegionName: the offer's region
    }
)
"""The applicability criteria the forward plan meets (the others: no availability zones,
capacity reservations, tags, virtual currency, one currency, one account and sub-account type)."""

_STATUS = "CommitmentDiscountStatus"
OVERRIDDEN: dict[str, tuple[str, dict[str, Any], dict[str, Any]]] = {
    "CommitmentDiscountStatus-C-003-C": (
        "the rule file's check says the opposite of its own words (MUST be null when "
        "CommitmentDiscountId is null)",
        {"CheckFunction": "CheckValue", "ColumnName": _STATUS, "Value": None},
        {"CheckFunction": "CheckValue", "ColumnName": "CommitmentDiscountId", "Value": None},
    ),
    "CommitmentDiscountStatus-C-004-C": (
        "the rule file's condition is CommitmentDiscountId null, while its words say not null "
        'and ChargeCategory "Usage"',
        {"CheckFunction": "CheckNotValue", "ColumnName": _STATUS, "Value": None},
        {
            "CheckFunction": "AND",
            "Items": [
                {
                    "CheckFunction": "CheckNotValue",
                    "ColumnName": "CommitmentDiscountId",
                    "Value": None,
                },
                {"CheckFunction": "CheckValue", "ColumnName": "ChargeCategory", "Value": "Usage"},
            ],
        },
    ),
    "CommitmentDiscountStatus-C-005-M": (
        "the rule file lists Active, Expired and Pending, while the FOCUS 1.2 specification's "
        "column (specification/columns/commitmentdiscountstatus.md) allows Used and Unused",
        {
            "CheckFunction": "OR",
            "Items": [
                {"CheckFunction": "CheckValue", "ColumnName": _STATUS, "Value": value}
                for value in ("Used", "Unused")
            ],
        },
        {},
    ),
}
"""Rules whose check in the file contradicts the FOCUS 1.2 specification, checked by its words
instead: the reason, the requirement, the condition."""

CHECKED_KEYWORDS = frozenset({"MUST", "MUST NOT"})
DATETIME_RE = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$")
NUMERIC_RE = re.compile(r"^-?(\d+(\.\d*)?|\.\d+)([eE]-?\d+)?$")
CURRENCY_RE = re.compile(r"^[A-Z]{3}$")

Mask = np.ndarray


@cache
def model() -> dict[str, Any]:
    """The rule file, read once."""
    return json.loads(RULES_FILE.read_text(encoding="utf-8"))


@dataclass(frozen=True)
class Dataset:
    """An export as columns: ``values`` per column (None for null), and its type per column
    (``text`` for a CSV's cells, else the Parquet file's Arrow type)."""

    values: dict[str, list[Any]]
    types: dict[str, Any]
    rows: int

    @classmethod
    def of_csv(cls, header: list[str], rows: list[dict[str, str | None]]) -> Dataset:
        return cls(
            {name: [row[name] for row in rows] for name in header},
            dict.fromkeys(header, "text"),
            len(rows),
        )

    @classmethod
    def of_arrow(cls, table: pa.Table) -> Dataset:
        return cls(
            {name: table.column(name).to_pylist() for name in table.column_names},
            {field.name: field.type for field in table.schema},
            table.num_rows,
        )


@dataclass(frozen=True)
class Failure:
    """A rule some rows break: its id, what it says, how many rows, the first of them."""

    rule: str
    says: str
    rows: int
    first_row: int


def _number(value: Any) -> float | None:
    if value is None:
        return None
    if isinstance(value, int | float):
        return float(value)
    try:
        return float(str(value))
    except ValueError:
        return math.nan


def _finite(cell: Any) -> bool:
    number = _number(cell)
    return number is not None and math.isfinite(number)


def _equal(cell: Any, value: Any) -> bool:
    if value is None:
        return cell is None
    if cell is None:
        return False
    if isinstance(value, int | float) and not isinstance(value, bool):
        number = _number(cell)
        return number is not None and number == float(value)
    return str(cell) == str(value)


class Evaluator:
    """The rules of :func:`model` on one :class:`Dataset`."""

    def __init__(self, data: Dataset, supported: Iterable[str] = SUPPORTED) -> None:
        self.data = data
        self.supported = frozenset(supported)
        self.rules: dict[str, Any] = model()["ModelRules"]
        self._results: dict[str, Mask] = {}
        self.checked: set[str] = set()

    # --- which rules count ------------------------------------------------------------------

    def counts(self, rule_id: str) -> bool:
        """Whether the rule is checked: active, static, MUST or MUST NOT, applicable."""
        rule = self.rules[rule_id]
        criteria = rule["ValidationCriteria"]
        return (
            rule["Status"] == "Active"
            and rule["Type"] == "Static"
            and criteria["Keyword"] in CHECKED_KEYWORDS
            and all(name in self.supported for name in rule["ApplicabilityCriteria"])
        )

    def requirement(self, rule_id: str) -> dict[str, Any]:
        if rule_id in OVERRIDDEN:
            return OVERRIDDEN[rule_id][1]
        return self.rules[rule_id]["ValidationCriteria"]["Requirement"]

    def condition(self, rule_id: str) -> dict[str, Any]:
        if rule_id in OVERRIDDEN:
            return OVERRIDDEN[rule_id][2]
        return self.rules[rule_id]["ValidationCriteria"]["Condition"]

    def applies(self, rule_id: str) -> Mask:
        """The rows the rule's own condition selects."""
        condition = self.condition(rule_id)
        return self.check(condition, when=True) if condition else self.everywhere(True)

    # --- evaluation -------------------------------------------------------------------------

    def everywhere(self, value: bool) -> Mask:
        return np.full(self.data.rows, value, dtype=bool)

    def holds(self, rule_id: str) -> Mask:
        """Per row, whether the rule holds (where it does not count, everywhere)."""
        found = self._results.get(rule_id)
        if found is None:
            if not self.counts(rule_id):
                found = self.everywhere(True)
            else:
                self.checked.add(rule_id)
                found = ~self.applies(rule_id) | self.check(self.requirement(rule_id))
            self._results[rule_id] = found
        return found

    def column(self, spec: dict[str, Any], key: str = "ColumnName") -> list[Any] | None:
        # two conditions of the file (ResourceId-C-006-C, ResourceType-C-005-C) name their
        # column under "CheckCondition"
        name = spec.get(key) or spec.get("CheckCondition") if key == "ColumnName" else spec[key]
        return self.data.values.get(str(name))

    def per_cell(self, spec: dict[str, Any], test: Callable[[Any], bool], *, null: bool) -> Mask:
        """``test`` on every cell of the spec's column, ``null`` for an empty one."""
        cells = self.column(spec)
        if cells is None:
            return self.everywhere(True)
        return np.fromiter(
            (null if cell is None else test(cell) for cell in cells),
            dtype=bool,
            count=self.data.rows,
        )

    def check(self, spec: dict[str, Any], when: bool = False) -> Mask:
        """One check function of the rule file, per row: as a requirement (where it holds) or,
        with ``when``, as a condition (where it selects the row)."""
        name = spec["CheckFunction"]
        method = getattr(self, f"_{name}", None)
        if method is None:
            raise AssertionError(f"check function {name} is not implemented here")
        return method(spec, when)

    def _AND(self, spec: dict[str, Any], when: bool) -> Mask:
        found = self.everywhere(True)
        for item in spec["Items"]:
            found &= self.check(item, when)
        return found

    def _OR(self, spec: dict[str, Any], when: bool) -> Mask:
        found = self.everywhere(False)
        for item in spec["Items"]:
            found |= self.check(item, when)
        return found

    def _CheckModelRule(self, spec: dict[str, Any], when: bool) -> Mask:
        return self.holds(spec["ModelRuleId"])

    def _ColumnPresent(self, spec: dict[str, Any], when: bool) -> Mask:
        return self.everywhere(spec["ColumnName"] in self.data.values)

    def _CheckValue(self, spec: dict[str, Any], when: bool) -> Mask:
        value = spec["Value"]
        null = value is None if when else True
        return self.per_cell(spec, lambda cell: _equal(cell, value), null=null)

    def _CheckNotValue(self, spec: dict[str, Any], when: bool) -> Mask:
        value = spec["Value"]
        null = value is not None  # a null is "not Correction", in a condition too
        return self.per_cell(spec, lambda cell: not _equal(cell, value), null=null)

    def _pair(self, spec: dict[str, Any], when: bool, same: bool) -> Mask:
        a, b = self.column(spec, "ColumnAName"), self.column(spec, "ColumnBName")
        if a is None or b is None:
            return self.everywhere(True)
        return np.array(
            [
                not when if x is None or y is None else (x == y) == same
                for x, y in zip(a, b, strict=True)
            ],
            dtype=bool,
        )

    def _CheckSameValue(self, spec: dict[str, Any], when: bool) -> Mask:
        return self._pair(spec, when, True)

    def _CheckNotSameValue(self, spec: dict[str, Any], when: bool) -> Mask:
        return self._pair(spec, when, False)

    def _CheckGreaterOrEqualThanValue(self, spec: dict[str, Any], when: bool) -> Mask:
        bound = float(spec["Value"])
        return self.per_cell(
            spec, lambda cell: _finite(cell) and _number(cell) >= bound, null=not when
        )

    def _CheckDecimalValue(self, spec: dict[str, Any], when: bool) -> Mask:
        return self.per_cell(spec, _finite, null=not when)

    def _ColumnByColumnEqualsColumnValue(self, spec: dict[str, Any], when: bool) -> Mask:
        a, b = self.column(spec, "ColumnAName"), self.column(spec, "ColumnBName")
        result = self.column(spec, "ResultColumnName")
        if a is None or b is None or result is None:
            return self.everywhere(True)
        found = []
        for x, y, z in zip(a, b, result, strict=True):
            x, y, z = _number(x), _number(y), _number(z)
            if x is None or y is None or z is None:
                found.append(not when)
            else:
                found.append(math.isclose(x * y, z, rel_tol=1e-9, abs_tol=1e-9))
        return np.array(found, dtype=bool)

    def _CheckDistinctCount(self, spec: dict[str, Any], when: bool) -> Mask:
        a, b = self.column(spec, "ColumnAName"), self.column(spec, "ColumnBName")
        if a is None or b is None:
            return self.everywhere(True)
        seen: dict[Any, set[Any]] = {}
        for x, y in zip(a, b, strict=True):
            if x is not None:
                seen.setdefault(x, set()).add(y)
        expected = int(spec["ExpectedCount"])
        return np.array([x is None or len(seen[x]) == expected for x in a], dtype=bool)

    def _typed(
        self, spec: dict[str, Any], when: bool, arrow: Callable[[Any], bool], text: re.Pattern
    ) -> Mask:
        kind = self.data.types.get(spec["ColumnName"])
        if kind is None:
            return self.everywhere(True)
        if kind != "text":
            return self.per_cell(spec, lambda cell: bool(arrow(kind)), null=not when)
        return self.per_cell(spec, lambda cell: bool(text.match(cell)), null=not when)

    def _TypeString(self, spec: dict[str, Any], when: bool) -> Mask:
        return self._typed(spec, when, pa.types.is_string, re.compile(r"(?s).*"))

    def _TypeDecimal(self, spec: dict[str, Any], when: bool) -> Mask:
        return self._typed(
            spec, when, lambda t: pa.types.is_floating(t) or pa.types.is_decimal(t), NUMERIC_RE
        )

    def _TypeDateTime(self, spec: dict[str, Any], when: bool) -> Mask:
        return self._typed(
            spec,
            when,
            lambda t: pa.types.is_timestamp(t) and t.tz in ("UTC", "+00:00"),
            DATETIME_RE,
        )

    def _FormatDateTime(self, spec: dict[str, Any], when: bool) -> Mask:
        def test(cell: Any) -> bool:
            if isinstance(cell, datetime):
                offset = cell.utcoffset()
                return offset is not None and offset.total_seconds() == 0
            return bool(DATETIME_RE.match(cell))

        return self.per_cell(spec, test, null=not when)

    def _FormatNumeric(self, spec: dict[str, Any], when: bool) -> Mask:
        def test(cell: Any) -> bool:
            if isinstance(cell, float | int):
                return math.isfinite(cell)
            return bool(NUMERIC_RE.match(cell))

        return self.per_cell(spec, test, null=not when)

    def _FormatString(self, spec: dict[str, Any], when: bool) -> Mask:
        def test(cell: Any) -> bool:  # valid Unicode (StringHandling-A-001-M)
            try:
                str(cell).encode("utf-8")
            except UnicodeEncodeError:
                return False
            return True

        return self.per_cell(spec, test, null=not when)

    def _FormatCurrency(self, spec: dict[str, Any], when: bool) -> Mask:
        return self.per_cell(spec, lambda cell: bool(CURRENCY_RE.match(cell)), null=not when)

    def _CheckNationalCurrency(self, spec: dict[str, Any], when: bool) -> Mask:
        return self._FormatCurrency(spec, when)

    def _FormatKeyValue(self, spec: dict[str, Any], when: bool) -> Mask:
        def test(cell: Any) -> bool:
            try:
                return isinstance(json.loads(cell), dict)
            except ValueError:
                return False

        return self.per_cell(spec, test, null=not when)

    def _FormatUnit(self, spec: dict[str, Any], when: bool) -> Mask:  # a SHOULD where used
        return self.everywhere(True)

    # --- the rules broken -------------------------------------------------------------------

    def failures(self, rule_id: str = ROOT_RULE, scope: Mask | None = None) -> list[Failure]:
        """The counted rules broken on rows within ``scope`` (the conditions of the rules above),
        the innermost that says why: an ``AND`` composite is looked into, any other named."""
        scope = self.everywhere(True) if scope is None else scope
        if not self.counts(rule_id):
            return []
        rule = self.rules[rule_id]
        criteria = rule["ValidationCriteria"]
        within = scope & self.applies(rule_id)
        broken = within & ~self.holds(rule_id)
        if not broken.any():
            return []
        requirement = self.requirement(rule_id)
        if requirement.get("CheckFunction") == "AND" and all(
            item.get("CheckFunction") == "CheckModelRule" for item in requirement["Items"]
        ):
            found: list[Failure] = []
            for item in requirement["Items"]:
                found += self.failures(item["ModelRuleId"], within)
            if found:
                return found
        rows = np.flatnonzero(broken)
        return [Failure(rule_id, criteria["MustSatisfy"], len(rows), int(rows[0]))]


def focus_failures(data: Dataset) -> tuple[list[Failure], int]:
    """The FOCUS 1.2 rules the export breaks, and how many rules were checked."""
    evaluator = Evaluator(data)
    found = evaluator.failures()
    evaluator.holds(ROOT_RULE)
    return found, len(evaluator.checked)
