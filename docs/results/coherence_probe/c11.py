"""C11 (issue 11, exploration): C9b trained also on the training parts' join proxies.

Registered in docs/RESULTS.md before this ran. Same measures and rule as c9.py. Never reads
DialSeg711 or a report part. Imports c9b (which runs c9 and coherence first: same seeds).
"""
import json
import sys
import time

import numpy as np

sys.path.insert(0, "/work/scratch/S")
import c9  # noqa: E402
import c9b  # noqa: E402
import coherence as co  # noqa: E402
import episeg.evaluation.train_fit as tf  # noqa: E402
import episeg.evaluation.train_rows as tr  # noqa: E402

T0 = time.time()


def log(*a):
    print(f"[{time.time() - T0:6.0f}s]", *a, flush=True)


JOIN_ROWS = {}


def join_corpus(name, cw):
    """Teacher-forced rows of ``name``'s join proxy, with the coh column."""
    ds, vs = co.join_proxy(name)
    key = name
    if key not in JOIN_ROWS:
        JOIN_ROWS[key] = tr.teacher_forced(f"{name}-join", list(ds), list(vs), 0)
    saved = co.C.get(f"{name}-join")
    co.C[f"{name}-join"] = (ds, vs)
    out = c9b.with_coh(f"{name}-join", JOIN_ROWS[key].rows, cw)
    if saved is None:
        del co.C[f"{name}-join"]
    return out


def folds_for(name, n):
    if name in co.FOLD:
        return co.FOLD[name]
    return np.random.default_rng([0, len(name)]).permutation(n) % 5


def recipe_c11(names, cw):
    corpora = [c9b.with_coh(n, co.ROWS[n].rows, cw) for n in names]
    corpora += [join_corpus(n, cw) for n in names if n != "agent"]
    folds = [folds_for(c.name, len(c.dialogues)) for c in corpora]
    oof = [np.zeros(len(c.rows.labels)) for c in corpora]
    for k in range(5):
        keep = [folds[i][np.asarray(c.rows.groups)] != k for i, c in enumerate(corpora)]
        m = co.fit(corpora, keep)
        for i, c in enumerate(corpora):
            oof[i][~keep[i]] = tf.logits(m, c.rows, ~keep[i])
    table = {t: [tf.decode(c, lg, t, 2) for c, lg in zip(corpora, oof)] for t in co.TAUS}
    tau = min(co.TAUS, key=lambda t: (float(np.mean([s["pk_a"] for s in table[t]])), -t))
    return co.fit(corpora), tau, corpora, folds


res = {}
for held in ("tiage", "sds"):
    others = [n for n in ("tiage", "sds", "agent") if n != held]
    cw = c9.coh_weights(co.coherence_model(others))
    m, tau, _, _ = recipe_c11(others, cw)
    log("C11", held, "tau", tau, "coh weight", round(float(m.weights[-1]), 3))
    for label, sets in (("natural", co.C[held]), ("join", co.PROXY[held])):
        s = c9b.decode(m, tau, cw, sets)
        res[f"C11_{label}_{held}"] = {"tau": tau, **s.to_dict()}
        log("C11", label, held, f"Pk {s.pk_a:.4f} ratio {s.boundary_ratio:.2f}")
names = ["tiage", "sds", "agent"]
_, tau, _, _ = recipe_c11(names, c9.coh_weights(co.coherence_model(names)))
saved = co.C["tiage"]
hyp = [None] * len(saved[0])
for k in range(5):
    idx = np.flatnonzero(co.FOLD["tiage"] != k)
    co.C["tiage"] = ([saved[0][i] for i in idx], [saved[1][i] for i in idx])
    cw = c9.coh_weights(co.coherence_model(names))
    co.C["tiage"] = saved
    corpora = [c9b.with_coh(n, co.ROWS[n].rows, cw) for n in names]
    keep = [co.FOLD[n][np.asarray(c.rows.groups)] != k for n, c in zip(names, corpora)]
    # the join proxies of the training parts: TIAGE's built from the other folds only
    co.C["tiage"] = ([saved[0][i] for i in idx], [saved[1][i] for i in idx])
    JOIN_ROWS.pop("tiage", None)
    jt = join_corpus("tiage", cw)
    co.C["tiage"] = saved
    JOIN_ROWS.pop("tiage", None)
    js = join_corpus("sds", cw)
    sds_fold_of_join = folds_for(js.name, len(js.dialogues))
    rows = [tr.subset(c.rows, kp) for c, kp in zip(corpora, keep)]
    rows += [jt.rows, tr.subset(js.rows, sds_fold_of_join[np.asarray(js.rows.groups)] != k)]
    tf.TERM_DIMS.clear()
    m = tf.fit(rows, dims=64, c=0.3, seed=0, lookahead=0)
    for g in np.flatnonzero(co.FOLD["tiage"] == k):
        hyp[g] = c9b.stream_b(m, saved[0][g], saved[1][g], co.dec(tau), cw)
s = co.score(saved[0], hyp)
res["C11_oof_tiage"] = {"tau": tau, **s.to_dict()}
log("C11 oof tiage", f"Pk {s.pk_a:.4f} ratio {s.boundary_ratio:.2f} tau {tau}")
for label in ("natural", "join"):
    res[f"C11_{label}_mean"] = float(np.mean([res[f"C11_{label}_{h}"]["pk_a"] for h in ("tiage", "sds")]))
log({k: round(v, 4) for k, v in res.items() if k.endswith("_mean")})
json.dump(res, open("/work/scratch/S/c11.json", "w"), indent=1)
