"""Benchmark of the feed parsers: ``uv run python bench/feeds.py [--items N]``.

Builds an Azure Retail Prices feed of N items (default 100 000, in pages of 1 000, as the API
pages) from the sample items of ``tests/hardware/feed_samples``, spread over the GPU sizes of
``hardware/data/cloud_instances.csv`` plus a non-GPU size and 60 regions, and a GCP SKU listing of
N / 10 SKUs (the sample's seven SKUs once per region); parses each into price rows, and the real Oracle price list once. Prints, per feed,
wall time and CPU time (``time.process_time``: the machine may be shared) of one run, the
``tracemalloc`` peak of a second run, and the rows made. The feeds are built in memory first; their
bytes are not counted in the peak.
"""

from __future__ import annotations

import argparse
import copy
import json
import sys
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from hardware.sources.azure import parse_azure_retail_prices  # noqa: E402
from hardware.sources.gcp import parse_gcp_skus  # noqa: E402
from hardware.sources.instances import read_instances  # noqa: E402
from hardware.sources.oracle import parse_oracle_prices  # noqa: E402

SAMPLES = ROOT / "tests" / "hardware" / "feed_samples"
PAGE_ITEMS = 1000
REGIONS = [f"region{n:02d}" for n in range(60)]


def azure_feed(items: int) -> list[bytes]:
    sample = json.loads((SAMPLES / "retail_prices_eastus_standard_d2s_v3_preview.json").read_text())
    sizes = [i.instance_type for i in read_instances(provider="azure").instances]
    sizes.append("Standard_D2s_v3")
    made, pages, page = 0, [], []
    while made < items:
        for template in sample["Items"]:
            item = copy.copy(template)
            item["armSkuName"] = sizes[(made // len(sample["Items"])) % len(sizes)]
            item["armRegionName"] = REGIONS[(made // (len(sample["Items"]) * len(sizes))) % 60]
            page.append(item)
            made += 1
            if len(page) == PAGE_ITEMS:
                pages.append(json.dumps({"Items": page, "NextPageLink": "next"}).encode())
                page = []
    if page:
        pages.append(json.dumps({"Items": page, "NextPageLink": None}).encode())
    return pages


def gcp_feed(skus: int) -> list[bytes]:
    sample = json.loads((SAMPLES / "opencost_cloudbilling_skus_page.json").read_text())
    listing = []
    for n in range(skus):
        sku = copy.deepcopy(sample["skus"][n % len(sample["skus"])])
        sku["skuId"] = f"{sku['skuId']}-{n}"
        sku["serviceRegions"] = [f"region{n // len(sample['skus'])}"]  # one sample per region
        listing.append(sku)
    return [
        json.dumps({"skus": listing[i : i + PAGE_ITEMS]}).encode()
        for i in range(0, len(listing), PAGE_ITEMS)
    ]


def measure(name: str, parse: Callable[[], int], read: int) -> None:
    wall, cpu = time.perf_counter(), time.process_time()
    rows = parse()
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    tracemalloc.start()  # a second run: tracing slows Python down several times
    parse()
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    print(
        f"{name:<8} {read:>8} items  {rows:>7} rows  wall {wall:6.2f} s  cpu {cpu:6.2f} s  "
        f"({read / max(cpu, 1e-6):,.0f} items per CPU-second)  tracemalloc peak {peak / 2**20:6.1f} MiB"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=100_000)
    items = parser.parse_args().items
    azure_pages, gcp_pages = azure_feed(items), gcp_feed(items // 10)
    azure, gcp, oracle = (read_instances(provider=p) for p in ("azure", "gcp", "oracle"))
    measure(
        "azure",
        lambda: len(parse_azure_retail_prices(azure_pages, instances=azure)[0]),
        items,
    )
    measure("gcp", lambda: len(parse_gcp_skus(gcp_pages, instances=gcp)[0]), items // 10)
    oracle_list = SAMPLES / "opencost_oracle_prices_usd.json"
    measure(
        "oracle",
        lambda: len(parse_oracle_prices(oracle_list, instances=oracle)[0]),
        len(json.loads(oracle_list.read_text())["items"]),
    )


if __name__ == "__main__":
    main()
