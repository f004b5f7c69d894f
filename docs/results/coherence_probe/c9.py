"""Fifth density pass (issue 11): C9 = C2 OR a label-free coherence rule, for roles-unknown streams.

Registered in docs/RESULTS.md before this ran. Leave-one-corpus-out over TIAGE train and the
SuperDialseg tune half (roles masked): natural transfer and the join proxy of the held-out part;
5-fold OOF on TIAGE train. Never reads DialSeg711 or a report part. Reuses coherence.py's data,
join proxies, C2 recipe and COH model (imported, so its exploration runs once more first).
"""
import json
import sys
import time

import numpy as np

sys.path.insert(0, "/work/scratch/S")
import coherence as co  # noqa: E402  (runs the exploration again: same seeds, same output)
import episeg.evaluation.train_rows as tr  # noqa: E402
from episeg.segmentation.features import EpisodeContext, boundary_features  # noqa: E402

T0 = time.time()
THETAS = tuple(round(-6.0 + 0.25 * i, 2) for i in range(41))


def log(*a):
    print(f"[{time.time() - T0:6.0f}s]", *a, flush=True)


def coh_weights(lr):
    w = lr.coef_[0]
    return w[:384], w[384:768], w[768:1152], w[1152:], float(lr.intercept_[0])


def coh_logit(cw, u, c):
    wu, wc, wuc, wabs, b = cw
    return float(wu @ u + wc @ c + wuc @ (u * c) + wabs @ np.abs(u - c) + b)


def stream9(model, d, vecs, dc, cw, theta):
    views = tr.turn_views(d, vecs)
    dc.reset()
    ctx = EpisodeContext()
    ctx.commit(views[0])
    tail = [vecs[0]]
    out = []
    for t in range(1, len(views)):
        cut = False
        if ctx.count >= dc.window:
            cut = True
        elif ctx.count >= dc.min_turns:
            x, e, a, b = boundary_features(ctx, views[t : t + 1], lookahead=0, roles_known=False)
            cut = dc.decide(model.logit(x, e, a, b), ctx.count)
            if not cut and cw is not None:
                cut = coh_logit(cw, vecs[t], np.mean(tail[-2:], axis=0)) < theta
        if cut:
            out.append(t)
            ctx = EpisodeContext()
            dc.hist.clear()
            tail = []
        ctx.commit(views[t])
        tail.append(vecs[t])
    return out


def pk(model, tau, cw, theta, sets):
    return [co.score(ds, [stream9(model, d, v, co.dec(tau), cw, theta) for d, v in zip(ds, vs)])
            for ds, vs in sets]


def training_sets(names):
    sets = [co.C[n] for n in names]
    sets += [co.join_proxy(n) for n in names if n != "agent"]
    return sets


def choose_theta(model, tau, cw, names):
    sets = training_sets(names)
    table = {th: float(np.mean([s.pk_a for s in pk(model, tau, cw, th, sets)])) for th in THETAS}
    return min(THETAS, key=lambda th: (table[th], th)), table


res = {}
for held in ("tiage", "sds"):
    others = [n for n in ("tiage", "sds", "agent") if n != held]
    m, tau = co.recipe(others)
    cw = coh_weights(co.coherence_model(others))
    theta, table = choose_theta(m, tau, cw, others)
    log("C9", held, "theta", theta, "train mean Pk", round(table[theta], 4))
    for label, sets in (("natural", co.C[held]), ("join", co.PROXY[held])):
        for cand, w in (("C2", None), ("C9", cw)):
            [s] = pk(m, tau, w, theta, [sets])
            res[f"{cand}_{label}_{held}"] = {"tau": tau, "theta": theta if w else None, **s.to_dict()}
            log(cand, label, held, f"Pk {s.pk_a:.4f} ratio {s.boundary_ratio:.2f}")
    res[f"theta_table_{held}"] = table
# OOF TIAGE: the threshold and theta of the full recipe, fold models for both parts
names = ("tiage", "sds", "agent")
m_all, tau = co.recipe(list(names))
cw_all = coh_weights(co.coherence_model(list(names)))
theta, table = choose_theta(m_all, tau, cw_all, names)
log("C9 full recipe: tau", tau, "theta", theta)
corpora = [co.ROWS[n] for n in names]
hyp = {"C2": [None] * len(co.C["tiage"][0]), "C9": [None] * len(co.C["tiage"][0])}
saved = {n: co.C[n] for n in names}
for k in range(5):
    keep = [co.FOLD[n][np.asarray(c.rows.groups)] != k for n, c in zip(names, corpora)]
    m = co.fit(corpora, keep)
    held_idx = np.flatnonzero(co.FOLD["tiage"] == k)
    train_idx = np.flatnonzero(co.FOLD["tiage"] != k)
    co.C["tiage"] = ([saved["tiage"][0][i] for i in train_idx], [saved["tiage"][1][i] for i in train_idx])
    cw = coh_weights(co.coherence_model(list(names)))  # label-free, without fold k of TIAGE
    co.C["tiage"] = saved["tiage"]
    for g in held_idx:
        d, v = saved["tiage"][0][g], saved["tiage"][1][g]
        hyp["C2"][g] = stream9(m, d, v, co.dec(tau), None, theta)
        hyp["C9"][g] = stream9(m, d, v, co.dec(tau), cw, theta)
for cand in ("C2", "C9"):
    s = co.score(saved["tiage"][0], hyp[cand])
    res[f"{cand}_oof_tiage"] = {"tau": tau, "theta": theta if cand == "C9" else None, **s.to_dict()}
    log(cand, "oof tiage", f"Pk {s.pk_a:.4f} ratio {s.boundary_ratio:.2f}")
for cand in ("C2", "C9"):
    for label in ("natural", "join"):
        res[f"{cand}_{label}_mean"] = float(np.mean([res[f"{cand}_{label}_{h}"]["pk_a"] for h in ("tiage", "sds")]))
res["full_recipe"] = {"tau": tau, "theta": theta}
log({k: round(v, 4) for k, v in res.items() if k.endswith("_mean")})
json.dump(res, open("/work/scratch/S/c9.json", "w"), indent=1)
