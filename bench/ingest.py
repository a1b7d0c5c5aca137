"""Benchmark of the AWS bulk offer parser: ``uv run python bench/ingest.py [--gb 1] [--json-mb 100]``.

Writes, in a temporary folder deleted afterwards, an AWS Price List bulk offer file of about
``--gb`` GB in the real layout (``bench/aws_offer_file.py``: GPU and non-GPU products, on-demand
and reserved terms) and one of about ``--json-mb`` MB. Then, each in a fresh child process
(so the peak resident memory is that of the job alone):

- ``parse_aws_offer_file`` on the large file: wall and CPU seconds, MB/s on CPU time (one core:
  the parser is single-threaded), peak resident set size (``ru_maxrss``), rows found, and a check
  that the rows are exactly the prices the writer put in the file;
- ``parse_aws_offer_file`` on the small file, and ``json.load`` of the small file (what loading
  the feed whole would cost), with the same figures.

The targets: under 200 MB resident whatever the file size; at least 100 MB/s on one core.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

MB = 1_000_000


def _child(job: str, path: Path, expected_rows: int) -> None:
    """Run one job in this (fresh) process and print its figures as JSON."""
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "costapp.settings")
    os.environ.setdefault("DEBUG", "true")
    if job == "parse":
        import django

        django.setup()
        from hardware.gpu_table import read_gpu_table
        from hardware.sources.aliases import read_aliases
        from hardware.sources.aws import parse_aws_offer_file

        aliases = read_aliases(known_slugs={row.slug for row in read_gpu_table()})
    rss_before_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    wall, cpu = time.perf_counter(), time.process_time()
    if job == "parse":
        rows, report = parse_aws_offer_file(path, aliases=aliases)
        found = len(rows)
        ok = found == expected_rows and report.bytes_read == path.stat().st_size
    else:
        with open(path, "rb") as handle:
            document = json.load(handle)
        found = len(document["products"])
        ok = True
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    print(
        json.dumps(
            {
                "wall_s": wall,
                "cpu_s": cpu,
                "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024 / MB,
                "rss_before_mb": rss_before_kb * 1024 / MB,
                "found": found,
                "ok": ok,
            }
        )
    )


def _run(job: str, path: Path, expected_rows: int) -> dict:
    out = subprocess.run(
        [sys.executable, __file__, "--child", job, str(path), str(expected_rows)],
        check=True,
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gb", type=float, default=1.0, help="size of the large file [GB]")
    parser.add_argument("--json-mb", type=float, default=100.0, help="size for json.load [MB]")
    parser.add_argument("--child", nargs=3, metavar=("JOB", "PATH", "ROWS"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        job, path, rows = args.child
        _child(job, Path(path), int(rows))
        return

    from bench.aws_offer_file import write_offer_file

    with tempfile.TemporaryDirectory(prefix="gputco-ingest-") as folder:
        started = time.perf_counter()
        large = write_offer_file(Path(folder) / "large.json", target_bytes=int(args.gb * 1e9))
        small = write_offer_file(Path(folder) / "small.json", target_bytes=int(args.json_mb * MB))
        print(
            f"wrote {large.bytes_written / MB:,.0f} MB ({large.products:,} products, "
            f"{len(large.expected)} GPU prices) and {small.bytes_written / MB:,.0f} MB in "
            f"{time.perf_counter() - started:.0f} s"
        )
        jobs = [
            ("parse_aws_offer_file", "parse", large),
            ("parse_aws_offer_file", "parse", small),
            ("json.load", "json", small),
        ]
        print(
            f"{'job':<22}{'file MB':>9}{'wall s':>9}{'CPU s':>8}{'MB/s (CPU)':>12}"
            f"{'MB/s (wall)':>13}{'peak RSS MB':>13}  check"
        )
        for label, job, offer in jobs:
            figures = _run(job, offer.path, len(offer.expected))
            size_mb = offer.bytes_written / MB
            print(
                f"{label:<22}{size_mb:>9,.0f}{figures['wall_s']:>9.2f}{figures['cpu_s']:>8.2f}"
                f"{size_mb / figures['cpu_s']:>12.1f}{size_mb / figures['wall_s']:>13.1f}"
                f"{figures['peak_rss_mb']:>13.1f}  "
                + ("rows exact" if job == "parse" and figures["ok"] else "")
                + ("ROWS WRONG" if not figures["ok"] else "")
            )
        print("targets: parser peak RSS < 200 MB at any size; >= 100 MB/s on one core (CPU time)")


if __name__ == "__main__":
    main()
