import tempfile, numpy as np
from pathlib import Path
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
mem.close(); SharedSystemClient.clear_system_cache()
mem = Memory(path=folder, embedder=emb, judge=None, scorer=None); mem.close()
v = np.asarray(emb.embed([text])[0], dtype=np.float32)
raw = b"".join(p.read_bytes() for p in folder.rglob("data_level0.bin"))
print("turn vector of the erased text still in a data_level0.bin:", v[:8].tobytes() in raw)
