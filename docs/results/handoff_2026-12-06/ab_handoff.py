"""A/B of recall's gather at 10^5 episodes, resident: the worker started first or not.

Run from the repo root after `episeg bench hierarchical --episodes 100000 --turns 2
--path /work/scratch/hb` filled the store:
    OMP_NUM_THREADS=2 .venv/bin/python docs/results/handoff_2026-12-06/ab_handoff.py [OUT.json]
Per query the two variants run back to back in alternating order (a repeated query is
faster), the raw query of another query before them; 4 rounds over the benchmark's 200
queries. `no_wait` is gather as it was before 2026-12-06 (lexical lists at once), `wait`
the shipped one (lexical lists once the worker runs). Hits are checked equal first.
"""

import json
import sys
import threading
import time
from pathlib import Path

import numpy as np

import episeg.recall.hierarchical as H
from episeg.benchmarks.hierarchical_bench import _words
from episeg.benchmarks.store_bench import open_chroma, unit_vectors
from episeg.embedders import HashingEmbedder
from episeg.recall import candidates as C
from episeg.recall.hierarchical import HierarchicalRecaller
from episeg.recall.overlap import submit
from episeg.recall.resident import fill_cache
from episeg.recall.persistent_store import PersistentIndexedStore
from episeg.store.turns import turn_collection_name

client, backend = open_chroma("/work/scratch/hb/n100000")
raw_store = backend.store_for("tenant-0")
folder = Path(client.get_settings().persist_directory) / "recall-index"
store = PersistentIndexedStore(raw_store, folder, cache_episodes=100000)
fill_cache(store.inner, store.index, store.recent)
rec = HierarchicalRecaller(store, HashingEmbedder(dim=384), clock=lambda: 1.7e9)
qrng = np.random.default_rng([0, 1])
qv = unit_vectors(qrng, 200)
qt = [" ".join(_words(qrng, 3)) for _ in range(200)]
raw = client.get_collection(turn_collection_name("tenant-0"))


def no_wait(store, params, vector, text, index, window):  # type: ignore[no-untyped-def]
    dense = submit(C.dense_list, store, params, vector, window)
    lexical = C.lexical_lists(params, text, index, window)
    return C.fuse(params, dense.result(), lexical, index)


def wait(store, params, vector, text, index, window):  # type: ignore[no-untyped-def]
    started = threading.Event()

    def dense_now():  # type: ignore[no-untyped-def]
        started.set()
        return C.dense_list(store, params, vector, window)

    dense = submit(dense_now)
    started.wait(0.05)
    lexical = C.lexical_lists(params, text, index, window)
    return C.fuse(params, dense.result(), lexical, index)


variants = {"no_wait": no_wait, "wait": wait}
H.gather = no_wait
ref = [rec.recall(q, 10, text=t) for q, t in zip(qv, qt)]
H.gather = wait
assert [rec.recall(q, 10, text=t) for q, t in zip(qv, qt)] == ref
res: dict[str, list[float]] = {k: [] for k in variants}
raws: list[float] = []
n = len(qv)
for rnd in range(4):
    for i in range(n):
        order = ["no_wait", "wait"] if (i + rnd) % 2 == 0 else ["wait", "no_wait"]
        j = (i + 7 * rnd + 1) % n
        a = time.perf_counter()
        raw.query(query_embeddings=qv[j].reshape(1, -1), n_results=200, include=["distances"])
        raws.append(time.perf_counter() - a)
        for k in order:
            H.gather = variants[k]
            a = time.perf_counter()
            rec.recall(qv[i], 10, text=qt[i])
            res[k].append(time.perf_counter() - a)
diff = np.array(res["wait"]) - np.array(res["no_wait"])
out = {
    "raw_p50_ms": 1000 * float(np.median(raws)),
    **{f"{k}_p50_ms": 1000 * float(np.median(v)) for k, v in res.items()},
    **{f"{k}_ratio": float(np.median(v) / np.median(raws)) for k, v in res.items()},
    "paired_median_diff_ms": 1000 * float(np.median(diff)),
    "wait_faster_share": float(np.mean(diff < 0)),
    "pairs": len(diff),
    "same_hits": True,
}
print(json.dumps(out, indent=1))
if len(sys.argv) > 1:
    Path(sys.argv[1]).write_text(json.dumps(out, indent=1) + "\n")
