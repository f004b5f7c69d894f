import sys, time, threading, numpy as np
from episeg.benchmarks.store_bench import open_chroma, unit_vectors
from episeg.store.turns import turn_collection_name
client, backend = open_chroma("/work/scratch/hb/n100000")
raw = client.get_collection(turn_collection_name("tenant-0"))
qv = unit_vectors(np.random.default_rng([0, 1]), 200)
def q(v): raw.query(query_embeddings=v.reshape(1,-1), n_results=200, include=["distances"])
for v in qv: q(v)
count=[0]; stop=[False]
def probe():
    while not stop[0]:
        x=0
        for i in range(200): x+=i
        count[0]+=1
sys.setswitchinterval(float(sys.argv[1]))
th=threading.Thread(target=probe, daemon=True); th.start()
c0=count[0]; t0=time.perf_counter(); time.sleep(0.8); rate_alone=(count[0]-c0)/(time.perf_counter()-t0)
c0=count[0]; t0=time.perf_counter()
ts=[]
for v in qv:
    a=time.perf_counter(); q(v); ts.append(time.perf_counter()-a)
dt=time.perf_counter()-t0; rate_q=(count[0]-c0)/dt
print(f"switch {sys.argv[1]}: query median {np.median(ts)*1e3:.3f} ms; probe rate during queries / alone = {rate_q/rate_alone:.2f}")
stop[0]=True
