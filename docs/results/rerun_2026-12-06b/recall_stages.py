import time, numpy as np
from pathlib import Path
from episeg.benchmarks.store_bench import open_chroma, unit_vectors
from episeg.benchmarks.hierarchical_bench import _words
from episeg.embedders import HashingEmbedder
from episeg.recall.hierarchical import HierarchicalRecaller
import episeg.recall.hierarchical as H
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
qv = unit_vectors(qrng, 200); qt = [" ".join(_words(qrng, 3)) for _ in range(200)]
raw = client.get_collection(turn_collection_name("tenant-0"))
G=[]; orig_g=H.gather
def g(*a, **k):
    t=time.perf_counter(); r=orig_g(*a, **k); G.append(time.perf_counter()-t); return r
H.gather=g
for q,t in zip(qv,qt): rec.recall(q,10,text=t)
G.clear()
R=[];TT=[]
for rnd in range(3):
  for q, t in zip(qv, qt):
    a=time.perf_counter(); raw.query(query_embeddings=q.reshape(1,-1), n_results=200, include=["distances"]); R.append(time.perf_counter()-a)
    a=time.perf_counter(); rec.recall(q,10,text=t); TT.append(time.perf_counter()-a)
m=lambda v: round(np.median(v)*1000,3)
print("raw", m(R), "total", m(TT), "gather", m(G), "rest", m(np.array(TT)-np.array(G)), "ratio", np.median(TT)/np.median(R))
