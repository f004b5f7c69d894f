"""Search recall of embedded Chroma after deletions, with the deleted slots' vectors kept or zeroed.

Real MiniLM vectors (the trainer's cache of the segmentation train parts, `--cache-dir` of
`episeg train segmenter`, here /work/scratch/vec), 500 of them held out as queries; for each
deleted share: recall@10 against exact cosine search over the live vectors, with the collection
still open, reopened as it is, and reopened after `episeg.store.scrub.scrub_store` (a copy).
Usage: python measure.py OUT.json
"""
import sys, glob, shutil, tempfile, struct, time, json
from pathlib import Path
import numpy as np
import chromadb
from chromadb.api.shared_system_client import SharedSystemClient
from episeg.store.scrub import scrub_store

vecs = np.concatenate([np.load(f) for f in sorted(glob.glob("/work/scratch/vec/*.npy"))]).astype(np.float32)
print("vectors", vecs.shape)
vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
rng = np.random.default_rng(0)
perm = rng.permutation(len(vecs))
N = len(vecs) - 500
base, queries = vecs[perm[:N]], vecs[perm[N:N + 500]]
ids = [f"t{i}" for i in range(N)]

def zero_deleted(folder):
    """What ChromaBackend.persistent does before it opens a store (episeg.store.scrub)."""
    return scrub_store(Path(folder))

def recall(col, live_mask, k=10):
    live = np.flatnonzero(live_mask)
    exact = np.argsort(-(queries @ base[live].T), axis=1)[:, :k]
    truth = [set(f"t{live[j]}" for j in row) for row in exact]
    got = col.query(query_embeddings=queries, n_results=k, include=[])["ids"]
    return float(np.mean([len(set(g) & t) / k for g, t in zip(got, truth)]))

out = {}
for frac in (0.0, 0.01, 0.1, 0.3, 0.5):
    folder = tempfile.mkdtemp()
    c = chromadb.PersistentClient(path=folder)
    col = c.create_collection("xcol", embedding_function=None, configuration={"hnsw": {"space": "cosine", "sync_threshold": 1}})
    for s in range(0, N, 5000):
        col.add(ids=ids[s:s + 5000], embeddings=base[s:s + 5000])
    live = np.ones(N, dtype=bool)
    dead = rng.choice(N, int(frac * N), replace=False)
    for s in range(0, len(dead), 5000):
        col.delete(ids=[ids[i] for i in dead[s:s + 5000]])
    live[dead] = False
    r_open = recall(col, live)
    del col, c; SharedSystemClient.clear_system_cache()
    copy = tempfile.mkdtemp(); shutil.rmtree(copy); shutil.copytree(folder, copy)
    c = chromadb.PersistentClient(path=folder); r_kept = recall(c.get_collection("xcol"), live)
    del c; SharedSystemClient.clear_system_cache()
    nz = zero_deleted(copy)
    c = chromadb.PersistentClient(path=copy); col = c.get_collection("xcol"); r_zero = recall(col, live)
    # the index still takes writes and finds them
    col.add(ids=["new"], embeddings=queries[:1]); hit = col.query(query_embeddings=queries[:1], n_results=1, include=[])["ids"][0][0]
    del col, c; SharedSystemClient.clear_system_cache()
    out[frac] = {"deleted": int(len(dead)), "zeroed_slots": nz, "recall_open": r_open, "recall_reopened_kept": r_kept, "recall_reopened_zeroed": r_zero, "new_found": hit == "new"}
    print(frac, out[frac], flush=True)
json.dump(out, open(sys.argv[1], "w"), indent=1)
