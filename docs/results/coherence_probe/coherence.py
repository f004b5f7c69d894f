"""Exploration (issue 11): the shipped roles-unknown recipe (C2) vs a label-free coherence model.

Registered in docs/RESULTS.md before this ran. Leave-one-corpus-out over TIAGE train and the
SuperDialseg tune half (roles masked); scored on a join proxy built from the held-out part's
own gold segments (>= 2 turns, shuffled with seed 7, joined 5 at a time, never two of one
dialogue side by side). Never reads DialSeg711 or a report part.
"""
import dataclasses
import json
import sys
import time

import numpy as np

sys.path.insert(0, "/work/main/docs/results/density_sweep")
sys.path.insert(0, "/work/scratch/S")
import episeg.evaluation.train_fit as tf  # noqa: E402
import episeg.evaluation.train_rows as tr  # noqa: E402
from episeg.evaluation.datasets import Dialogue  # noqa: E402
from harness import TRAIN, Decoder, load, score, stream, vecs_of  # noqa: E402
from sklearn.linear_model import LogisticRegression  # noqa: E402

T0 = time.time()
TAUS = tuple(round(-2.0 + 0.125 * i, 3) for i in range(25))


def log(*a):
    print(f"[{time.time() - T0:6.0f}s]", *a, flush=True)


C = {}
for name, (rel, part, _) in TRAIN.items():
    ds = load(rel, part)
    C[name] = ([dataclasses.replace(d, roles_known=False) for d in ds], [vecs_of(d) for d in ds])
rng0 = np.random.default_rng(0)
FOLD = {n: rng0.permutation(len(C[n][0])) % 5 for n in ("tiage", "sds", "agent")}


def join_proxy(name, seed=7, per=5):
    ds, vs = C[name]
    segs = []
    for i, (d, v) in enumerate(zip(ds, vs)):
        cuts = [0, *d.boundaries, len(d)]
        for a, b in zip(cuts, cuts[1:]):
            if b - a >= 2:
                segs.append((i, d.turns[a:b], v[a:b]))
    order = list(np.random.default_rng(seed).permutation(len(segs)))
    out_d, out_v = [], []
    while order:
        chosen = []
        for j in list(order):
            if not chosen or segs[j][0] != segs[chosen[-1]][0]:
                chosen.append(j)
                order.remove(j)
            if len(chosen) == per:
                break
        if len(chosen) < 2:
            break
        turns, vecs, bounds = [], [], []
        for j in chosen:
            if turns:
                bounds.append(len(turns))
            turns.extend(segs[j][1])
            vecs.append(segs[j][2])
        out_d.append(Dialogue(f"{name}-join-{len(out_d)}", "join proxy", list(turns), bounds, False))
        out_v.append(np.concatenate(vecs))
    return out_d, out_v


PROXY = {n: join_proxy(n) for n in ("tiage", "sds")}
log("join proxies", {n: (len(p[0]), sum(len(d.boundaries) for d in p[0])) for n, p in PROXY.items()})

# ---- C2: the shipped roles-unknown recipe (third pass), trained without the held-out part
ROWS = {n: tr.teacher_forced(n, list(C[n][0]), list(C[n][1]), 0) for n in C}


def fit(corpora, keep=None):
    rows = [c.rows if keep is None else tr.subset(c.rows, keep[i]) for i, c in enumerate(corpora)]
    tf.TERM_DIMS.clear()
    return tf.fit(rows, dims=64, c=0.3, seed=0, lookahead=0)


def recipe(names):
    corpora = [ROWS[n] for n in names]
    folds = [FOLD[n] for n in names]
    oof = [np.zeros(len(c.rows.labels)) for c in corpora]
    for k in range(5):
        keep = [folds[i][np.asarray(c.rows.groups)] != k for i, c in enumerate(corpora)]
        m = fit(corpora, keep)
        for i, c in enumerate(corpora):
            oof[i][~keep[i]] = tf.logits(m, c.rows, ~keep[i])
    table = {t: [tf.decode(c, lg, t, 2) for c, lg in zip(corpora, oof)] for t in TAUS}
    tau = min(TAUS, key=lambda t: (float(np.mean([s["pk_a"] for s in table[t]])), -t))
    return fit(corpora), tau


def dec(tau):
    d = Decoder(tau, g=2.5, w=20, nmin=5, floor=tau - 1, min_turns=2)
    d.per_episode = True
    return d


# ---- COH: next turn vs a turn of another dialogue, no boundary labels
def feats(u, c):
    return np.concatenate([u, c, u * c, np.abs(u - c)])


def pairs(name, rng):
    ds, vs = C[name]
    flat = [(i, t) for i, v in enumerate(vs) for t in range(len(v))]
    x, y = [], []
    for i, v in enumerate(vs):
        for t in range(1, len(v)):
            c = v[max(0, t - 2) : t].mean(axis=0)
            x.append(feats(v[t], c))
            y.append(1)
            while True:
                j, s = flat[rng.integers(len(flat))]
                if j != i:
                    break
            x.append(feats(vs[j][s], c))
            y.append(0)
    return np.asarray(x), np.asarray(y)


def coherence_model(names):
    rng = np.random.default_rng(1)
    xs, ys, ws = [], [], []
    for n in names:
        x, y = pairs(n, rng)
        xs.append(x)
        ys.append(y)
        ws.append(np.full(len(y), 1.0 / len(y)))
    w = np.concatenate(ws)
    lr = LogisticRegression(C=1.0, max_iter=3000)
    lr.fit(np.concatenate(xs), np.concatenate(ys), sample_weight=w / w.mean())
    return lr


def coh_cuts(lr, v, theta):
    if len(v) < 2:
        return []
    x = np.asarray([feats(v[t], v[max(0, t - 2) : t].mean(axis=0)) for t in range(1, len(v))])
    z = lr.decision_function(x)
    cuts, last = [], 0
    for t, s in zip(range(1, len(v)), z):
        if s < theta and t - last >= 2:
            cuts.append(t)
            last = t
    return cuts


THETAS = tuple(round(-6.0 + 0.25 * i, 2) for i in range(41))
res = {}
for held in ("tiage", "sds"):
    others = [n for n in ("tiage", "sds", "agent") if n != held]
    m, tau = recipe(others)
    pd, pv = PROXY[held]
    s = score(pd, [stream(m, d, v, dec(tau)) for d, v in zip(pd, pv)])
    res[f"C2_join_{held}"] = {"tau": tau, **s.to_dict()}
    log("C2", held, f"join proxy Pk {s.pk_a:.4f} ratio {s.boundary_ratio:.2f} tau {tau}")
    lr = coherence_model(others)
    own = [join_proxy(n) for n in others if n != "agent"]
    def mean_pk(theta):
        return float(np.mean([score(d, [coh_cuts(lr, x, theta) for x in v]).pk_a for d, v in own]))
    theta = min(THETAS, key=mean_pk)
    s = score(pd, [coh_cuts(lr, v, theta) for v in pv])
    res[f"COH_join_{held}"] = {"theta": theta, **s.to_dict()}
    log("COH", held, f"join proxy Pk {s.pk_a:.4f} ratio {s.boundary_ratio:.2f} theta {theta}")
    nd, nv = C[held]
    s = score(nd, [coh_cuts(lr, v, theta) for v in nv])
    res[f"COH_natural_{held}"] = {"theta": theta, **s.to_dict()}
    log("COH", held, f"natural Pk {s.pk_a:.4f} ratio {s.boundary_ratio:.2f}")
for cand in ("C2", "COH"):
    res[f"{cand}_join_mean"] = float(np.mean([res[f"{cand}_join_{h}"]["pk_a"] for h in ("tiage", "sds")]))
log({k: round(v, 4) for k, v in res.items() if k.endswith("_mean")})
json.dump(res, open("/work/scratch/S/coherence.json", "w"), indent=1)
