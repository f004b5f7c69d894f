"""C9b (issue 11, exploration): the COH logit as one more hand feature of the roles-unknown model.

Registered in docs/RESULTS.md before this ran. Same measures and rule as c9.py. Never reads
DialSeg711 or a report part.
"""
import json
import sys
import time

import numpy as np

sys.path.insert(0, "/work/scratch/S")
import c9  # noqa: E402  (runs c9 first: same seeds; reuses its helpers)
import coherence as co  # noqa: E402
import episeg.evaluation.train_fit as tf  # noqa: E402
import episeg.evaluation.train_rows as tr  # noqa: E402
from episeg.segmentation.features import EpisodeContext, boundary_features  # noqa: E402

T0 = time.time()


def log(*a):
    print(f"[{time.time() - T0:6.0f}s]", *a, flush=True)


def with_coh(name, rows, cw):
    """``rows`` with the COH logit appended to every row's hand features (gold open episode)."""
    ds, vs = co.C[name]
    out = tr.TrainingRows(names=(*rows.names, "coh"))
    for i in range(len(rows.labels)):
        g, t = rows.groups[i], rows.ts[i]
        gold = [b for b in ds[g].boundaries if b < t]
        start = gold[-1] if gold else 0
        c = vs[g][max(start, t - 2) : t].mean(axis=0)
        x = np.append(rows.x[i], c9.coh_logit(cw, vs[g][t], c))
        out.add(x, rows.e[i], rows.a[i], rows.b[i], label=bool(rows.labels[i]),
                eligible=rows.eligible[i], group=g, t=t)
    return tr.Corpus(name, ds, out)


def recipe_b(names, cw):
    corpora = [with_coh(n, co.ROWS[n].rows, cw) for n in names]
    folds = [co.FOLD[n] for n in names]
    oof = [np.zeros(len(c.rows.labels)) for c in corpora]
    for k in range(5):
        keep = [folds[i][np.asarray(c.rows.groups)] != k for i, c in enumerate(corpora)]
        m = co.fit(corpora, keep)
        for i, c in enumerate(corpora):
            oof[i][~keep[i]] = tf.logits(m, c.rows, ~keep[i])
    table = {t: [tf.decode(c, lg, t, 2) for c, lg in zip(corpora, oof)] for t in co.TAUS}
    tau = min(co.TAUS, key=lambda t: (float(np.mean([s["pk_a"] for s in table[t]])), -t))
    return co.fit(corpora), tau, corpora


def stream_b(model, d, vecs, dc, cw):
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
            x = np.append(x, c9.coh_logit(cw, vecs[t], np.mean(tail[-2:], axis=0)))
            cut = dc.decide(model.logit(x, e, a, b), ctx.count)
        if cut:
            out.append(t)
            ctx = EpisodeContext()
            dc.hist.clear()
            tail = []
        ctx.commit(views[t])
        tail.append(vecs[t])
    return out


def decode(model, tau, cw, sets):
    ds, vs = sets
    return co.score(ds, [stream_b(model, d, v, co.dec(tau), cw) for d, v in zip(ds, vs)])


res = {}
for held in ("tiage", "sds"):
    others = [n for n in ("tiage", "sds", "agent") if n != held]
    cw = c9.coh_weights(co.coherence_model(others))
    m, tau, _ = recipe_b(others, cw)
    log("C9b", held, "tau", tau, "coh weight", round(float(m.weights[-1]), 3))
    for label, sets in (("natural", co.C[held]), ("join", co.PROXY[held])):
        s = decode(m, tau, cw, sets)
        res[f"C9b_{label}_{held}"] = {"tau": tau, **s.to_dict()}
        log("C9b", label, held, f"Pk {s.pk_a:.4f} ratio {s.boundary_ratio:.2f}")
names = ("tiage", "sds", "agent")
_, tau, _ = recipe_b(list(names), c9.coh_weights(co.coherence_model(list(names))))
saved = co.C["tiage"]
hyp = [None] * len(saved[0])
for k in range(5):
    train_idx = np.flatnonzero(co.FOLD["tiage"] != k)
    co.C["tiage"] = ([saved[0][i] for i in train_idx], [saved[1][i] for i in train_idx])
    cw = c9.coh_weights(co.coherence_model(list(names)))
    co.C["tiage"] = saved
    corpora = [with_coh(n, co.ROWS[n].rows, cw) for n in names]
    keep = [co.FOLD[n][np.asarray(c.rows.groups)] != k for n, c in zip(names, corpora)]
    m = co.fit(corpora, keep)
    for g in np.flatnonzero(co.FOLD["tiage"] == k):
        hyp[g] = stream_b(m, saved[0][g], saved[1][g], co.dec(tau), cw)
s = co.score(saved[0], hyp)
res["C9b_oof_tiage"] = {"tau": tau, **s.to_dict()}
log("C9b oof tiage", f"Pk {s.pk_a:.4f} ratio {s.boundary_ratio:.2f} tau {tau}")
for label in ("natural", "join"):
    res[f"C9b_{label}_mean"] = float(np.mean([res[f"C9b_{label}_{h}"]["pk_a"] for h in ("tiage", "sds")]))
log({k: round(v, 4) for k, v in res.items() if k.endswith("_mean")})
json.dump(res, open("/work/scratch/S/c9b.json", "w"), indent=1)
