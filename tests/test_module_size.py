"""No module of ``costapp``, ``hardware`` or ``accounts`` over 600 lines (the engine,
``costapp/tco/``, and the migrations aside): a module that grows past it is split by feature, as
docs/architecture.md lays the house out."""

from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("costapp", "hardware", "accounts")
MOST_LINES = 600

STILL_OVER: dict[str, int] = {
    "hardware/models.py": 685,
    "hardware/api/serializers.py": 641,
    "hardware/refresh.py": 623,
}
"""The modules over the limit on this branch, with their length today, allowed until they are
split (their split is under way elsewhere): the list only shrinks, and a module in it that no
longer exceeds the limit must leave it."""


def line_counts() -> dict[str, int]:
    counts: dict[str, int] = {}
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            relative = path.relative_to(ROOT)
            if relative.parts[:2] == ("costapp", "tco") or "migrations" in relative.parts:
                continue
            counts[relative.as_posix()] = len(path.read_text(encoding="utf-8").splitlines())
    return counts


def test_no_module_is_over_600_lines():
    counts = line_counts()
    assert len(counts) > 100  # the walk finds the packages' modules
    over = {path: n for path, n in counts.items() if n > MOST_LINES and path not in STILL_OVER}
    assert over == {}


def test_the_modules_allowed_over_the_limit_are_over_it_and_do_not_grow():
    counts = line_counts()
    for path, allowed in STILL_OVER.items():
        assert path in counts, f"{path} is gone: take it off STILL_OVER"
        assert counts[path] > MOST_LINES, f"{path} is {counts[path]} lines: take it off STILL_OVER"
        assert counts[path] <= allowed, f"{path} grew to {counts[path]} lines"
