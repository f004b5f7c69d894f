"""Fixed-work controls after an ONNX encode vs tight loop (the time-based busy loop could not slow down)."""
import time, sys
import numpy as np
from episeg.benchmarks.timing import load_texts
from episeg.benchmarks.segment_bench import _turns
from episeg.defaults import default_embedder
from episeg.embedders import CachingEmbedder
from episeg.segmentation.segmenter import Segmenter
rows = load_texts("../shared/data/segmentation/superdialseg/superdialseg_validation.jsonl", 600)
turns = _turns(rows, len(rows))[:300]
emb = default_embedder()
emb.embed(["warm"] * 8)
cached = CachingEmbedder(emb); cached.prefetch(t.text[:2000] for t in turns)

def pyloop(t):
    x = 0
    for i in range(3000): x += i
def npwork(t, a=np.random.rand(384).astype(np.float32), m=np.random.rand(16, 384).astype(np.float32)):
    for i in range(40):
        v = m @ a; float(v.max())
big = {i: [i, str(i)] for i in range(200000)}
keys = np.random.randint(0, 200000, 2000).tolist()
def dictwalk(t):
    s = 0
    for k in keys: s += big[k][0]

def run(label, work, fresh=None):
    enc = []; after = []
    for t in turns:
        t0 = time.perf_counter(); emb.embed([t.text[:2000]]); t1 = time.perf_counter()
        work(t); t2 = time.perf_counter()
        enc.append(t1 - t0); after.append(t2 - t1)
    tight = []
    work = fresh() if fresh else work
    for t in turns:
        t1 = time.perf_counter(); work(t); tight.append(time.perf_counter() - t1)
    print(f"{label:12s} encode {np.mean(enc)*1e6:7.0f}us  after {np.median(after)*1e6:6.0f}us  tight {np.median(tight)*1e6:6.0f}us  x{np.median(after)/np.median(tight):.2f}", flush=True)

def mk():
    seg = Segmenter(embedder=cached)
    return lambda t: seg.observe(t)
for rep in range(2):
    run("pyloop3000", pyloop)
    run("np40", npwork)
    run("dictwalk", dictwalk)
    run("segmenter", mk(), mk)
