"""``python manage.py simulate FILE.json [--json]``: price a scenario document and print the result.

Exit codes: 0 success; 2 an invalid document (one ``path: message`` line per problem on stderr,
nothing on stdout; text quoted from the document is escaped, so a problem is always one line);
1 any other failure (a file that cannot be read, a fault of the program).
"""

import json
import math
import sys
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from costapp.scenarios.services import scenario_simulate
from costapp.tco import ScenarioError, escape_text, loads


class Command(BaseCommand):
    help = (
        "Price a scenario document (JSON) and print the result document or a table of key figures."
    )
    requires_system_checks: list[str] = []

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("file", help="the scenario document (JSON); - reads standard input")
        parser.add_argument(
            "--json", action="store_true", help="print only the result document as JSON"
        )

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            text = (
                sys.stdin.buffer.read()
                if options["file"] == "-"
                else Path(options["file"]).read_bytes()
            )
        except OSError as exc:
            self._fail(1, escape_text(f"cannot read {options['file']}: {exc.strerror or exc}"))
        try:
            result = scenario_simulate(document=loads(text), gpu_table_fallback=True)
            output = (
                json.dumps(result, indent=1, allow_nan=False)
                if options["json"]
                else render_table(result)
            )
        except ScenarioError as exc:
            self._fail(2, "\n".join(f"{e.field or '(document)'}: {e.message}" for e in exc.errors))
        except Exception as exc:  # anything else is a failure of the run, not of the document
            self._fail(1, escape_text(f"simulation failed: {type(exc).__name__}: {exc}"))
        self.stdout.write(output)

    def _fail(self, code: int, message: str) -> None:
        self.stderr.write(message, ending="\n")
        sys.exit(code)


def _text(value: Any) -> str:
    """A name or a warning on one line, printable whatever the document held."""
    return escape_text(str(value))


def _money(value: float | None) -> str:
    return "-" if value is None or not math.isfinite(value) else f"{value:,.0f}"


def _number(value: float | None, spec: str) -> str:
    return "-" if value is None or not math.isfinite(value) else format(value, spec)


def render_table(result: dict[str, Any]) -> str:
    """The key figures per option as a plain-text table."""
    headers = [
        "option",
        "type",
        "gpu",
        "total USD",
        "NPV USD",
        "USD/busy GPU-h",
        "savings %",
        "break-even mo",
        "utilization",
        "USD/M tokens",
        "goodput",
        "feasible",
    ]
    rows = []
    for option in result["options"]:
        rows.append(
            [
                _text(option["name"]),
                option["type"],
                "-" if option["gpu"] is None else _text(option["gpu"]),
                _money(option["total_usd"]),
                _money(option["npv_usd"]),
                _number(option["usd_per_busy_gpu_hour"], ".2f"),
                _number(option["savings_vs_baseline_pct"], ".1f"),
                _number(option["break_even_month"], ".1f"),
                _number(option["average_utilization"], ".0%"),
                _number(option.get("all_in_usd_per_million_tokens"), ".2f"),
                _number(option.get("goodput"), ".1%"),
                "yes" if option["feasible"] else "NO",
            ]
        )
    widths = [max(len(str(r[i])) for r in [headers, *rows]) for i in range(len(headers))]
    lines = [_text(result["name"]), ""]
    for i, row in enumerate([headers, *rows]):
        cells = [
            str(c).ljust(w) if j < 3 else str(c).rjust(w)
            for j, (c, w) in enumerate(zip(row, widths, strict=True))
        ]
        lines.append("  ".join(cells).rstrip())
        if i == 0:
            lines.append("  ".join("-" * w for w in widths))
    lines.append("")
    cheapest = "none feasible" if result["cheapest"] is None else _text(result["cheapest"])
    lines.append(f"cheapest: {cheapest}   baseline: {_text(result['baseline'])}")
    if "simulation" in result:
        lines.append("")
        lines.append(
            f"Monte Carlo: {result['simulation']['paths']} paths, seed {result['simulation']['seed']}"
        )
        for option in result["options"]:
            lines.append(
                f"  {_text(option['name'])}: P10 {_money(option['p10_usd'])}  "
                f"P50 {_money(option['p50_usd'])}  P90 {_money(option['p90_usd'])}  "
                f"cheapest on {_number(option['probability_cheapest'], '.0%')} of paths  "
                f"NPV mean {_money(option['mean_npv_usd'])}  P90 {_money(option['p90_npv_usd'])}"
            )
    lines.extend(sizing_lines(result.get("sizing") or []))
    # the top-level warnings hold every option's own, prefixed with its name
    for warning in result.get("warnings", []):
        lines.append(f"warning: {_text(warning)}")
    return "\n".join(lines)


def sizing_lines(sweeps: list[dict[str, Any]]) -> list[str]:
    """Each sweep's best size and its objective (scenario format 1.1), after a blank line."""
    if not sweeps:
        return []
    lines = ["", "Sizing:"]
    for sweep in sweeps:
        sizes = sweep["candidates"]
        if sweep["field"] == "layers":  # format 1.3: a mix sized jointly
            span = f"{sizes[0]}-{sizes[-1]}"
        else:
            span = (
                f"{sizes[0]}-{sizes[-1]} by {sizes[1] - sizes[0]}"
                if len(sizes) > 1
                else f"{sizes[0]}"
            )
        where = f"  {_text(sweep['option'])}: {sweep['field']} {span} ({len(sizes)} sizes), {sweep['objective']}"
        if sweep["best"] is None:
            lines.append(f"{where}: no size qualifies")
        else:
            lines.append(
                f"{where}: best {sweep['best']}, {sweep['objective']} "
                f"{_money(sweep['best_objective_usd'])} USD"
            )
    return lines
