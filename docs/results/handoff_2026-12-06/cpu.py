import time, threading, numpy as np
from episeg.benchmarks.store_bench import open_chroma, unit_vectors
from episeg.store.turns import turn_collection_name
client, backend = open_chroma("/work/scratch/hb/n100000")
raw = client.get_collection(turn_collection_name("tenant-0"))
qv = unit_vectors(np.random.default_rng([0, 1]), 200)
def q(v): raw.query(query_embeddings=v.reshape(1,-1), n_results=200, include=["distances"])
for v in qv: q(v)
w0=time.perf_counter(); c0=time.process_time()
for v in qv: q(v)
w=time.perf_counter()-w0; c=time.process_time()-c0
print("alone: wall/query %.3f ms, cpu/wall %.2f" % (w/200*1e3, c/w))
# background GIL-free C work: big numpy sort releases the GIL? use np.dot with 1 thread
stop=False
def bg_nogil():
    a=np.random.rand(300,300)
    while not stop: a@a
def bg_gil():
    x=0
    while not stop:
        for i in range(1000): x+=i
for name,f in (("nogil-bg",bg_nogil),("gil-bg",bg_gil)):
    stop=False; t=threading.Thread(target=f); t.start(); time.sleep(0.05)
    ts=[]
    for v in qv:
        a=time.perf_counter(); q(v); ts.append(time.perf_counter()-a)
    stop=True; t.join()
    print(name, "median %.3f ms" % (np.median(ts)*1e3))
ts=[]
for v in qv:
    a=time.perf_counter(); q(v); ts.append(time.perf_counter()-a)
print("alone median %.3f ms" % (np.median(ts)*1e3))
