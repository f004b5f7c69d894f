"""C10 (issue 11): roles-unknown streams decoded by the label-free COH model alone.

Registered in docs/RESULTS.md before this ran. Same measures and rule as c9.py. Never reads
DialSeg711 or a report part. Uses coherence.py's data, proxies and COH model (imported).
"""
import json
import sys
import time

import numpy as np

sys.path.insert(0, "/work/scratch/S")
import coherence as co  # noqa: E402  (runs the exploration again: same seeds)

T0 = time.time()
THETAS = tuple(round(-6.0 + 0.25 * i, 2) for i in range(41))


def log(*a):
    print(f"[{time.time() - T0:6.0f}s]", *a, flush=True)


def cuts_open_episode(lr, v, theta):
    """COH against the open episode's last two turns (one right after a cut), min 2 turns."""
    out, start = [], 0
    for t in range(1, len(v)):
        if t - start < 2:
            continue
        c = v[max(start, t - 2) : t].mean(axis=0)
        if lr.decision_function(co.feats(v[t], c)[None, :])[0] < theta:
            out.append(t)
            start = t
    return out


def mean_pk(lr, theta, sets):
    return float(np.mean([co.score(ds, [cuts_open_episode(lr, v, theta) for v in vs]).pk_a for ds, vs in sets]))


def training_sets(names):
    return [co.C[n] for n in names] + [co.join_proxy(n) for n in names if n != "agent"]


def choose(lr, names):
    sets = training_sets(names)
    table = {th: mean_pk(lr, th, sets) for th in THETAS}
    return min(THETAS, key=lambda th: (table[th], th)), table


res = {}
for held in ("tiage", "sds"):
    others = [n for n in ("tiage", "sds", "agent") if n != held]
    lr = co.coherence_model(others)
    theta, table = choose(lr, others)
    for label, (ds, vs) in (("natural", co.C[held]), ("join", co.PROXY[held])):
        s = co.score(ds, [cuts_open_episode(lr, v, theta) for v in vs])
        res[f"C10_{label}_{held}"] = {"theta": theta, **s.to_dict()}
        log("C10", label, held, f"Pk {s.pk_a:.4f} ratio {s.boundary_ratio:.2f} theta {theta}")
names = ["tiage", "sds", "agent"]
theta, _ = choose(co.coherence_model(names), names)
saved = co.C["tiage"]
hyp = [None] * len(saved[0])
for k in range(5):
    idx = np.flatnonzero(co.FOLD["tiage"] != k)
    co.C["tiage"] = ([saved[0][i] for i in idx], [saved[1][i] for i in idx])
    lr = co.coherence_model(names)
    co.C["tiage"] = saved
    for g in np.flatnonzero(co.FOLD["tiage"] == k):
        hyp[g] = cuts_open_episode(lr, saved[1][g], theta)
s = co.score(saved[0], hyp)
res["C10_oof_tiage"] = {"theta": theta, **s.to_dict()}
log("C10 oof tiage", f"Pk {s.pk_a:.4f} ratio {s.boundary_ratio:.2f} theta {theta}")
for label in ("natural", "join"):
    res[f"C10_{label}_mean"] = float(np.mean([res[f"C10_{label}_{h}"]["pk_a"] for h in ("tiage", "sds")]))
log({k: round(v, 4) for k, v in res.items() if k.endswith("_mean")})
json.dump(res, open("/work/scratch/S/c10.json", "w"), indent=1)
