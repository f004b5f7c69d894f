import sys, time, numpy as np
from pathlib import Path
from episeg.benchmarks.store_bench import open_chroma, unit_vectors
from episeg.benchmarks.hierarchical_bench import _words
from episeg.embedders import HashingEmbedder
from episeg.recall.hierarchical import HierarchicalRecaller
from episeg.recall.resident import fill_cache
from episeg.recall.persistent_store import PersistentIndexedStore
from episeg.recall import candidates as C
from episeg.recall.overlap import submit
from episeg.recall.window import RecallWindow
client, backend = open_chroma("/work/scratch/hb/n100000")
raw_store = backend.store_for("tenant-0")
folder = Path(client.get_settings().persist_directory) / "recall-index"
store = PersistentIndexedStore(raw_store, folder, cache_episodes=100000)
rec = HierarchicalRecaller(store, HashingEmbedder(dim=384), clock=lambda: 1.7e9)
qrng = np.random.default_rng([0, 1])
qv = unit_vectors(qrng, 200); qt = [" ".join(_words(qrng, 3)) for _ in range(200)]
rec.recall(qv[0],10,text=qt[0])
params = rec.params; index = store.index
win = RecallWindow.everything() if hasattr(RecallWindow,'everything') else None
win = RecallWindow(index.cards, None, None, None, None, span=index.max_span)
def busy(sec):
    e=time.perf_counter()+sec
    while time.perf_counter()<e: pass
variants = {
 "alone": lambda i: C.dense_list(store, params, qv[i], win),
 "worker+sleep": lambda i: (lambda f: (time.sleep(0.0015), f.result()))(submit(C.dense_list, store, params, qv[i], win)),
 "worker+lex": lambda i: (lambda f: (C.lexical_lists(params, qt[i], index, win), f.result()))(submit(C.dense_list, store, params, qv[i], win)),
 "worker+pybusy": lambda i: (lambda f: (busy(0.0015), f.result()))(submit(C.dense_list, store, params, qv[i], win)),
}
import sys; sys.setswitchinterval(float(sys.argv[1]) if len(sys.argv)>1 else 0.005)
T={k:[] for k in variants}; L=[]
names=list(variants); n=len(qv)
for rnd in range(3):
  for i in range(n):
    order = names if (i+rnd)%2==0 else names[::-1]
    for k in order:
        j=(i+k.__len__()+rnd*3)%n
        a=time.perf_counter(); variants[k](j); T[k].append(time.perf_counter()-a)
print({k: round(np.median(v)*1e3,3) for k,v in T.items()})
for i in range(n):
    a=time.perf_counter(); C.lexical_lists(params, qt[i], index, win); L.append(time.perf_counter()-a)
print("lex alone", round(np.median(L)*1e3,3))
