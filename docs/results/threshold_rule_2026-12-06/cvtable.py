"""The main model's CV table: mean OOF protocol-A Pk and per-corpus (Pk, boundary ratio) per threshold.

Run from the repository root; /work/scratch/vec is the trainer's --cache-dir (MiniLM vectors of the train parts).
"""
import sys, json, dataclasses
from pathlib import Path
import numpy as np
from episeg.embedders import MiniLMEmbedder
from episeg.evaluation import train_fit
from episeg.evaluation.train_presets import PRESETS, TRAIN_PARTS
from episeg.evaluation.train_rows import embed_file, teacher_forced
from episeg.evaluation.datasets import read_jsonl, select_part
root = Path("../shared/data/segmentation")
emb = MiniLMEmbedder.default()
corpora = []
for name, rel, part in TRAIN_PARTS:
    chosen = select_part(root / rel, read_jsonl(root / rel), part)
    vecs = embed_file(root / rel, chosen, emb, Path("/work/scratch/vec"), 2000)
    corpora.append(teacher_forced(name, chosen, vecs, 0))
orig_decode = train_fit.decode
table = {}
def spy(cp, lg, tau, min_turns=1):
    s = orig_decode(cp, lg, tau, min_turns); table.setdefault(tau, {})[cp.name] = (s["pk_a"], s["ratio"]); return s
train_fit.decode = spy
cv = train_fit.cross_validated(corpora, dims=64, c=0.3, seed=0, folds=5, lookahead=0, min_turns=2, judge_share=0.1)
print("chosen", cv.threshold)
for tau in sorted(table):
    row = table[tau]; print(f"{tau:+.3f} mean {np.mean([v[0] for v in row.values()]):.4f} ", {k: (round(v[0],3), round(v[1],2)) for k,v in row.items()})
