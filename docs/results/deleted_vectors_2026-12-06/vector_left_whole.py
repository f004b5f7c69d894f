"""The forget scenario of docs/results/erasure_2026-12-06/vector_left.py, checked with the whole
normalised vector (that script compared the first 8 floats of a sparse hashing vector: all
zeros, found in any file). Prints the files that hold the erased turn's vector after forget and a
reopen: before the deleted-vector pass one data_level0.bin, after it none."""
import tempfile
from pathlib import Path

import numpy as np
from chromadb.api.shared_system_client import SharedSystemClient

from episeg.memory import Memory
from episeg.testing import HashingEmbedder
from episeg.types import Turn

folder = Path(tempfile.mkdtemp())
emb = HashingEmbedder()
mem = Memory(path=folder, embedder=emb, judge=None, scorer=None)
text = "zebraquokka alpha secret deploy note"
mem.observe(Turn(actor="user", text=text, ts=1.0, user="alice", session="s1"))
mem.observe(Turn(actor="user", text="marmot beta", ts=2.0, user="alice", session="s2"))
first = next(e for e in mem.flush() if e.session == "s1")
mem.forget("alice", episode=first.id)
mem.close()
SharedSystemClient.clear_system_cache()
mem = Memory(path=folder, embedder=emb, judge=None, scorer=None)
mem.close()
v = np.asarray(emb.embed([text])[0], dtype=np.float32)
stored = (v / np.linalg.norm(v)).astype(np.float32).tobytes()  # Chroma keeps it normalised
held = [str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file() and stored in p.read_bytes()]
print("files holding the erased turn's vector:", held)
