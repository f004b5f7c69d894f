import sys, time, threading, numpy as np
from episeg.benchmarks.store_bench import open_chroma, unit_vectors
from episeg.store.turns import turn_collection_name
client, backend = open_chroma("/work/scratch/hb/n100000")
raw = client.get_collection(turn_collection_name("tenant-0"))
qv = unit_vectors(np.random.default_rng([0, 1]), 200)
def q(v): raw.query(query_embeddings=v.reshape(1,-1), n_results=200, include=["distances"])
for v in qv: q(v)
count=[0]; stop=[False]; busy_t=[0.0]
def probe():
    while not stop[0]:
        a=time.perf_counter(); x=0
        for i in range(200): x+=i   # ~10us of GIL-holding python
        busy_t[0]+=time.perf_counter()-a; count[0]+=1
sys.setswitchinterval(0.0001)
th=threading.Thread(target=probe, daemon=True); th.start()
t0=time.perf_counter(); c0=count[0]; b0=busy_t[0]
for v in qv: q(v)
dt=time.perf_counter()-t0
print(f"query {dt/200*1e3:.3f} ms; probe python time during queries {(busy_t[0]-b0)/dt:.2f} of wall")
stop[0]=True
