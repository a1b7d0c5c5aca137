"""Where the files shipped with the catalog are (``hardware/data/``; its README gives each file's
origin and licence). Every reader and command takes its default path from here.

Plain paths, no Django: the parsers of ``hardware.sources`` and ``costapp/settings.py`` may read it.
"""

from pathlib import Path

DATA_DIR = Path(__file__).resolve().parent / "data"

GPU_TABLE_PATH = DATA_DIR / "gpus.csv"
"""The GPU table: datasheet figures per GPU model (``hardware.gpu_table``)."""
ALIASES_PATH = DATA_DIR / "aliases.csv"
"""The GPU names price sources use, to GPU slugs (``hardware.sources.aliases``)."""
INSTANCES_PATH = DATA_DIR / "cloud_instances.csv"
"""The GPUs of the Azure, GCP and Oracle instance types (``hardware.sources.instances``)."""
PROVIDERS_PATH = DATA_DIR / "providers.csv"
"""The providers the shipped catalog knows (``hardware.sources.seed``)."""
DEMO_DEDICATED_PATH = DATA_DIR / "demo_dedicated_quotes.csv"
DEMO_PURCHASE_PATH = DATA_DIR / "demo_purchase_quotes.csv"
STATED_ON_PATH = DATA_DIR / "stated_on.csv"
"""The date each shipped price file's source stated its prices (by path under ``data/``)."""

PRICES_DIR = DATA_DIR / "prices"
SKYPILOT_DIR = PRICES_DIR / "skypilot-v8"
"""The SkyPilot price catalogs, one ``<cloud>.csv`` per provider."""
COMMITTED_PATH = PRICES_DIR / "committed" / "published.csv"
"""The clouds' published 1- and 3-year committed prices (``hardware.committed.services``)."""
EPOCH_PATH = PRICES_DIR / "epoch_hardware_prices.csv"
"""Epoch AI's dated hardware prices (``hardware.committed.services``)."""
EGRESS_PATH = PRICES_DIR / "egress_tiers.csv"
"""The providers' internet egress tiers (``hardware.sources.egress``)."""
TOKEN_PRICES_PATH = DATA_DIR / "models" / "token_prices.csv"
"""Hosted models' published prices per million tokens (``hardware.hosted.load``)."""
ASSUMPTIONS_PATH = DATA_DIR / "assumptions.csv"
"""Sourced figures for plans without a quote (``hardware.hosted.load``)."""
