"""Cost of the scrub pass at open on a large store: first pass (every segment read for deleted
flags), then a pass with nothing changed (skipped by the recorded size and mtime).
Usage: python pass_cost.py STORE_FOLDER (e.g. the 10^5-episode store of `episeg bench hierarchical`)."""
import sys, time, logging
from pathlib import Path
from episeg.store.scrub import STATE, scrub_store
logging.basicConfig(level=logging.INFO)
folder = Path(sys.argv[1])
sizes = sum(p.stat().st_size for p in folder.glob("*/data_level0.bin"))
print(f"data_level0.bin total {sizes / 1e6:.0f} MB in {len(list(folder.glob('*/header.bin')))} segments")
(folder / STATE).write_text("\n".join(" ".join(l.split()[:2]) for l in (folder / STATE).read_text().splitlines()) + "\n")
for label in ("first pass (list of the older form: every segment read)", "nothing changed", "nothing changed"):
    t = time.perf_counter(); n = scrub_store(folder); dt = time.perf_counter() - t
    print(f"{label}: {dt * 1000:.1f} ms, {n} bytes rewritten")
