"""How does the segmenter's cost after an encode relate to its tight-loop cost?"""
import time, statistics, sys
import numpy as np
from episeg.benchmarks.timing import load_texts
from episeg.benchmarks.segment_bench import _turns
from episeg.defaults import default_embedder
from episeg.embedders import CachingEmbedder
from episeg.segmentation.segmenter import Segmenter
rows = load_texts("../shared/data/segmentation/superdialseg/superdialseg_validation.jsonl", 600)
turns = _turns(rows, len(rows))[:400]
emb = default_embedder()
emb.embed(["warm"] * 8)
cached = CachingEmbedder(emb); cached.prefetch(t.text[:2000] for t in turns)

def busy(us):
    end = time.perf_counter() + us * 1e-6
    x = 0
    while time.perf_counter() < end: x += 1

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
    print(f"{label:12s} encode {np.mean(enc)*1e6:7.0f}us  after {np.mean(after)*1e6:6.0f}us  tight {np.mean(tight)*1e6:6.0f}us  ratio {np.mean(enc)/(np.mean(enc)+np.mean(after)):.3f}")

for rep in range(2):
    run("nothing", lambda t: None)
    run("busy100", lambda t: busy(100))
    run("busy200", lambda t: busy(200))
    def mk():
        seg = Segmenter(embedder=cached)
        return lambda t: seg.observe(t)
    run("segmenter", mk(), mk)

print("--- without semantic and drift")
def mk2():
    seg = Segmenter(embedder=cached, signals=["marker", "structural", "window"])
    return lambda t: seg.observe(t)
for rep in range(2):
    run("seg-nosd", mk2(), mk2)
    run("segmenter", mk(), mk)
