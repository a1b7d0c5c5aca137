"""No module of ``costapp``, ``hardware`` or ``accounts`` over 600 lines (the engine,
``costapp/tco/``, and the migrations aside): a module that grows past it is split by feature, as
docs/architecture.md lays the house out."""

from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("costapp", "hardware", "accounts")
MOST_LINES = 600


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
    over = {path: n for path, n in counts.items() if n > MOST_LINES}
    assert over == {}
