"""Replication of C7 (issue 11): C7r = trainer-style splicing (seeded pairing, CV over joined units).

Registered in docs/RESULTS.md before this ran. Run once per pairing seed: splice_r.py 1, splice_r.py 2.
The rest of this docstring is the fourth pass's (splice.py), whose helpers this reuses.


Registered in docs/RESULTS.md ("Density that transfers: fourth pass") before this ran.
C2 = the shipped roles-unknown recipe (TIAGE train + SuperDialseg tune half and agent_tau tune
part with roles masked; PCA 64, C 0.3, seed 0, threshold by 5-fold CV over its own corpora,
min 2 turns, open-episode relative rule g 2.5 w 20 n 5 floor tau-1).
C7 = the same recipe on *spliced* TIAGE and SuperDialseg dialogues: within each CV fold, the
fold's dialogues in a seeded order are concatenated in pairs, the join becoming one more gold
boundary (agent_tau streams are already spliced trajectories and stay as they are).

Measures, each for C2 and C7:
- transfer (natural): leave-one-corpus-out for TIAGE train and the SuperDialseg tune half, the
  held-out part decoded streaming with roles dropped (as the third pass);
- transfer (spliced): the same held-out part spliced in pairs the same way (seed 99, the same
  streams for both candidates);
- OOF TIAGE: 5-fold streaming out-of-fold Pk on TIAGE train (natural dialogues).
Never reads DialSeg711 or a report part.

Run: flock /work/scratch/heavy.lock env OMP_NUM_THREADS=2 .venv/bin/python splice.py
(needs the evaluation cache of the three train parts at /work/scratch/seg/eval/vectors.npz).
"""
import dataclasses
import json
import sys
import time

import numpy as np

sys.path.insert(0, "/work/main/docs/results/density_sweep")
import episeg.evaluation.train_fit as tf  # noqa: E402
import episeg.evaluation.train_rows as tr  # noqa: E402
from episeg.evaluation.datasets import Dialogue  # noqa: E402
from harness import TRAIN, Decoder, load, score, stream, vecs_of  # noqa: E402

TAUS = tuple(round(-2.0 + 0.125 * i, 3) for i in range(25))
MIN_TURNS = 2
T0 = time.time()
SEED = int(sys.argv[1])
OUT = f"/work/scratch/S/splice_r{SEED}.json"


def log(*a):
    print(f"[{time.time() - T0:6.0f}s]", *a, flush=True)


def masked(ds):
    return [dataclasses.replace(d, roles_known=False) for d in ds]


C = {}
for name, (rel, part, _) in TRAIN.items():
    ds = load(rel, part)
    C[name] = (masked(ds), [vecs_of(d) for d in ds])  # TIAGE is roles-unknown already
rng = np.random.default_rng(0)
FOLD = {n: rng.permutation(len(C[n][0])) % 5 for n in ("tiage", "sds", "agent")}  # third.py's
log("dialogues", {n: len(c[0]) for n, c in C.items()})


def join(a, va, b, vb):
    bounds = [*a.boundaries, len(a), *(len(a) + x for x in b.boundaries)]
    d = Dialogue(f"{a.id}+{b.id}", f"{a.source} + {b.source}", [*a.turns, *b.turns], bounds, False)
    return d, np.concatenate([va, vb])


def splice(ds, vs, fold, seed):
    """Pairs of dialogues of the same fold, in a seeded order, joined; (dialogues, vecs, fold)."""
    out_d, out_v, out_f = [], [], []
    for k in range(5):
        idx = np.flatnonzero(fold == k)
        idx = np.random.default_rng([seed, k]).permutation(idx)
        for j in range(0, len(idx), 2):
            if j + 1 < len(idx):
                d, v = join(ds[idx[j]], vs[idx[j]], ds[idx[j + 1]], vs[idx[j + 1]])
            else:
                d, v = ds[idx[j]], vs[idx[j]]
            out_d.append(d)
            out_v.append(v)
            out_f.append(k)
    return out_d, out_v, np.asarray(out_f)




def pair_units(ds, vs, seed):
    """Dialogues paired in a seeded random order and joined; (units, vecs, members)."""
    order = np.random.default_rng(seed).permutation(len(ds))
    units, uv, members = [], [], []
    for j in range(0, len(order), 2):
        if j + 1 < len(order):
            a, b = order[j], order[j + 1]
            d, v = join(ds[a], vs[a], ds[b], vs[b])
            units.append(d); uv.append(v); members.append((a, b))
        else:
            a = order[j]
            units.append(ds[a]); uv.append(vs[a]); members.append((a,))
    return units, uv, members


UNITS = {n: pair_units(*C[n], SEED) for n in ("tiage", "sds")}
ROWS = {}


def corpus(name, spliced):
    key = (name, spliced)
    if key not in ROWS:
        ds, vs = (UNITS[name][:2]) if spliced else C[name]
        ROWS[key] = tr.teacher_forced(name, list(ds), list(vs), 0)
        log("rows", key, len(ROWS[key].rows.labels), "positives", sum(ROWS[key].rows.labels))
    return ROWS[key]


def fit(corpora, keep=None):
    rows = [c.rows if keep is None else tr.subset(c.rows, keep[i]) for i, c in enumerate(corpora)]
    tf.TERM_DIMS.clear()
    return tf.fit(rows, dims=64, c=0.3, seed=0, lookahead=0)


def trainer_folds(corpora):
    rng = np.random.default_rng(0)  # cross_validated's folds: seed 0, by dialogue (unit)
    return [rng.permutation(len(c.dialogues)) % 5 for c in corpora]


def recipe(corpora):
    folds = trainer_folds(corpora)
    oof = [np.zeros(len(c.rows.labels)) for c in corpora]
    for k in range(5):
        keep = [folds[i][np.asarray(c.rows.groups)] != k for i, c in enumerate(corpora)]
        m = fit(corpora, keep)
        for i, c in enumerate(corpora):
            held = ~keep[i]
            oof[i][held] = tf.logits(m, c.rows, held)
    table = {t: [tf.decode(c, lg, t, MIN_TURNS) for c, lg in zip(corpora, oof)] for t in TAUS}
    tau = min(TAUS, key=lambda t: (float(np.mean([s["pk_a"] for s in table[t]])), -t))
    return fit(corpora), tau, folds


def dec(tau):
    d = Decoder(tau, g=2.5, w=20, nmin=5, floor=tau - 1, min_turns=MIN_TURNS)
    d.per_episode = True
    return d


def decode_set(model, tau, dialogues, vecs):
    return score(dialogues, [stream(model, d, v, dec(tau)) for d, v in zip(dialogues, vecs)])


def training(names):
    return [corpus(n, n != "agent") for n in names]


r = {"pairing_seed": SEED}
for held in ("tiage", "sds"):
    tc = training([n for n in ("tiage", "sds", "agent") if n != held])
    m, tau, _ = recipe(tc)
    s = decode_set(m, tau, *C[held])
    r[f"transfer_natural_{held}"] = {"tau": tau, **s.to_dict()}
    log("C7r", SEED, "transfer natural", held, f"tau {tau} Pk {s.pk_a:.4f} ratio {s.boundary_ratio:.2f}")
tc = training(("tiage", "sds", "agent"))
_, tau, folds = recipe(tc)
unit_fold = {}
for u, mem in enumerate(UNITS["tiage"][2]):
    for a in mem:
        unit_fold[a] = folds[0][u]
hyp = [None] * len(C["tiage"][0])
for k in range(5):
    keep = [f[np.asarray(c.rows.groups)] != k for c, f in zip(tc, folds)]
    m = fit(tc, keep)
    for g in range(len(hyp)):
        if unit_fold[g] == k:
            hyp[g] = stream(m, C["tiage"][0][g], C["tiage"][1][g], dec(tau))
s = score(C["tiage"][0], hyp)
r["oof_tiage"] = {"tau": tau, **s.to_dict()}
log("C7r", SEED, "oof tiage", f"tau {tau} Pk {s.pk_a:.4f} ratio {s.boundary_ratio:.2f}")
r["transfer_natural_mean"] = float(np.mean([r[f"transfer_natural_{h}"]["pk_a"] for h in ("tiage", "sds")]))
log("C7r", SEED, "natural mean", round(r["transfer_natural_mean"], 4))
json.dump(r, open(OUT, "w"), indent=1)
