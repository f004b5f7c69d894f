import time, sys, numpy as np
sys.path.insert(0, "/work/scratch/s30")
from fast import fuse2, rank2
from pathlib import Path
from episeg.benchmarks.store_bench import open_chroma, unit_vectors
from episeg.benchmarks.hierarchical_bench import _words
from episeg.embedders import HashingEmbedder
from episeg.recall.hierarchical import HierarchicalRecaller
from episeg.recall.persistent_store import PersistentIndexedStore
from episeg.recall import candidates as C, ranking as R
from episeg.recall.window import RecallWindow
from episeg.recall.hits import Expand
from episeg.config import EpisegConfig, RecallConfig
client, backend = open_chroma("/work/scratch/hb/n100000")
store = PersistentIndexedStore(backend.store_for("tenant-0"), Path(client.get_settings().persist_directory) / "recall-index")
rec = HierarchicalRecaller(store, HashingEmbedder(dim=384), clock=lambda: 1.7e9)
qrng = np.random.default_rng([0, 1])
qv = unit_vectors(qrng, 200); qt = [" ".join(_words(qrng, 3)) for _ in range(200)]
p = rec.params; index = store.index
data=[]
for q,t in zip(qv,qt):
    w = RecallWindow(index.cards, None, None, None, None, span=index.max_span)
    data.append((C.dense_list(store, p, q, w), C.lexical_lists(p, t, index, w)))
cfg2 = EpisegConfig(recall=RecallConfig(weights=(0.3,0.2,1.0), reinforcement_weight=0.1))
for cfg in (rec._config, cfg2):
  for d,lx in data:
    a,ea = C.fuse(cfg.recall,d,lx,index); b,eb = fuse2(cfg.recall,d,lx,index)
    assert ea==eb and list(a)==list(b) and all(a[k]==b[k] for k in a), "fuse"
    ra = R.rank(a, index.cards, cfg, None, now=1.7e9, n_lists=3); rb = rank2(b, index.cards, cfg, None, now=1.7e9, n_lists=3)
    assert ra==rb, "rank"
print("identical")
def run(f, r):
    for d,lx in data:
        cands, le = f(p, d, lx, index); r(cands, index.cards, rec._config, None, now=1.7e9, n_lists=3)
for i in range(3):
    for name,(f,r) in {"old":(C.fuse,R.rank),"new":(fuse2,rank2)}.items():
        a=time.perf_counter(); run(f,r); print(name, round((time.perf_counter()-a)/200*1000,3))
