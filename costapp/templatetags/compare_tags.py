"""Template tags of run comparisons: the "Compare with…" form and how a difference is written."""

from typing import Any

from django import template

from costapp.reports.comparison import value_text
from costapp.scenarios import selectors
from hardware.display import figures

register = template.Library()

CANDIDATES = 200
"""How many succeeded runs (newest first) the "Compare with…" selects offer."""


@register.inclusion_tag("runs/_compare_form.html", takes_context=True)
def compare_form(context: dict[str, Any], run: Any = None) -> dict[str, Any]:
    """A form to the comparison page: beside ``run`` (a run's page), one select of the other
    succeeded runs the user may read; without ``run`` (the runs list), two selects."""
    user = context["request"].user
    candidates = list(selectors.runs_succeeded_visible(user=user)[:CANDIDATES])
    if run is not None:
        others = [c for c in candidates if c.pk != run.pk]
        return {"run": run, "others": others, "enough": bool(others)}
    return {
        "run": None,
        "others": candidates,
        "enough": len(candidates) >= 2,
        "default_a": candidates[1].pk if len(candidates) >= 2 else None,
        "default_b": candidates[0].pk if candidates else None,
    }


@register.filter
def signed(value: Any, digits: int = 2) -> str:
    """A difference with its sign (+ or −), thousands separators and ``digits`` decimals; a dash
    for none, "unchanged" for no change at that precision (``hardware.display.figures.change_text``)."""
    return figures.change_text(value, int(digits))


@register.filter
def input_value(value: Any) -> str:
    """An input value of the comparison (``(absent)`` for a path the run does not have)."""
    return value_text(value)
