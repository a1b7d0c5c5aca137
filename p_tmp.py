from pathlib import Path
from collections import Counter
from hardware.sources.aliases import read_aliases
from hardware.sources.skypilot import parse_skypilot_vms
from hardware.sources.epoch import parse_epoch_prices
from hardware.sources.committed import parse_committed_prices
al = read_aliases()
for c in "cudo daytona hyperstack jarvislabs lium mithril primeintellect seeweb yotta".split():
    rows, rep = parse_skypilot_vms(Path(f"hardware/data/prices/skypilot-v8/{c}.csv"), cloud=c, aliases=al)
    print(c, rep.rows_read, len(rows), dict(rep.rejected_by_reason), rep.rows_unconfirmed, Counter(r.subject for r in rep.rejections if r.subject))
obs, rep = parse_epoch_prices(Path("hardware/data/prices/epoch_hardware_prices.csv"), aliases=read_aliases(source="epoch"))
print(rep.rows_read, len(obs), dict(rep.rejected_by_reason))
for o in obs: print(o.line_no, o.provider, o.region, o.gpu_slug, o.billing, o.usd_per_gpu_hour, o.stated_on, o.aws_instance)
rows, rep = parse_committed_prices(Path("hardware/data/prices/committed/published.csv"), gpu_names={"H100 SXM5 80GB":"h100-sxm"})
print(rows, rep)
