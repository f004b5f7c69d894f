import numpy as np, time
from pathlib import Path
from episeg.embedders import MiniLMEmbedder
from episeg.evaluation import train_fit
from episeg.evaluation.train_presets import TRAIN_PARTS
from episeg.evaluation.train_rows import embed_file, teacher_forced
from episeg.evaluation.datasets import read_jsonl, select_part
import sklearn.linear_model as lm
root = Path("../shared/data/segmentation")
emb = MiniLMEmbedder.default()
corpora = []
for name, rel, part in TRAIN_PARTS:
    chosen = select_part(root / rel, read_jsonl(root / rel), part)
    vecs = embed_file(root / rel, chosen, emb, Path("CACHE"), 2000)
    corpora.append(teacher_forced(name, chosen, vecs, 0))
rows = [c.rows for c in corpora]
Orig = lm.LogisticRegression
res = {}
for tol in (1e-4, 1e-6, 1e-8):
    class LR(Orig):
        def __init__(self, **kw):
            kw.setdefault("tol", tol); super().__init__(**kw)
    lm.LogisticRegression = LR
    t0 = time.time()
    m = train_fit.fit(rows, dims=64, c=0.3, seed=0, lookahead=0)
    res[tol] = m
    print(tol, "s", round(time.time()-t0,1), m.weights[:3], m.bias)
    # perturb features slightly
lm.LogisticRegression = Orig
for a, b in ((1e-4, 1e-8), (1e-6, 1e-8)):
    print(a, b, "max |dw|", np.max(np.abs(res[a].weights - res[b].weights)), {k: float(np.max(np.abs(res[a].vectors[k]-res[b].vectors[k]))) for k in res[a].vectors})
