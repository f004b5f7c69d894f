"""Third density pass: C1 (masked copies in one model), C2 (separate roles-unknown model) vs base.

Transfer (leave-one-corpus-out, held-out decoded streaming with roles dropped) + 5-fold OOF.
Never reads DialSeg711 or a report part.
"""
import dataclasses, json, pickle, sys, time
sys.path.insert(0, "/work/scratch/E")
import numpy as np
import episeg.evaluation.train_segmenter as _ts, episeg.evaluation.train_rows as tr
_ts._Rows = tr.TrainingRows
import episeg.evaluation.train_fit as tf
from harness import Decoder, stream, score, CACHE

TAUS = tuple(round(-2.0 + 0.125 * i, 3) for i in range(25))
MIN_TURNS = 2
C = pickle.loads((CACHE / "rows.pkl").read_bytes())  # name -> (dialogues, vectors, rows)
T0 = time.time()


def log(*a):
    print(f"[{time.time()-T0:6.0f}s]", *a, flush=True)


def masked(name):
    ds, vs, _ = C[name]
    nr = [dataclasses.replace(d, roles_known=False) for d in ds]
    key = CACHE.parent / f"masked_{name}.pkl"
    p = __import__("pathlib").Path("/work/scratch/H") / f"masked_{name}.pkl"
    if p.is_file():
        return pickle.loads(p.read_bytes())
    cp = tr.teacher_forced(name, nr, vs, 0)
    p.write_bytes(pickle.dumps(cp))
    return cp


REAL = {n: tr.Corpus(n, C[n][0], C[n][2]) for n in C}  # tiage rows are roles-unknown already
MASK = {"tiage": REAL["tiage"], "sds": masked("sds"), "agent": masked("agent")}
log("rows", {n: len(c.rows.labels) for n, c in REAL.items()}, {n: len(c.rows.labels) for n, c in MASK.items()})
VECS = {n: C[n][1] for n in C}
rng = np.random.default_rng(0)
FOLD = {n: rng.permutation(len(C[n][0])) % 5 for n in ("tiage", "sds", "agent")}


DIMS = {"C3": 0, "C4": 16}


def fit(corpora, keep=None):
    rows = [c.rows if keep is None else tr.subset(c.rows, keep[i]) for i, c in enumerate(corpora)]
    dims = DIMS.get(CAND, 64)
    tf.TERM_DIMS.clear()
    if dims == 0:
        tf.TERM_DIMS.update({"turn": 0, "shift": 0, "agree": 0})
    return tf.fit(rows, dims=max(dims, 1), c=0.3, seed=0, lookahead=0)


def recipe(corpora, folds):
    """The trainer's recipe: threshold by 5-fold teacher-forced CV over corpora, then full fit."""
    oof = [np.zeros(len(c.rows.labels)) for c in corpora]
    for k in range(5):
        keep = [folds[i][np.asarray(c.rows.groups)] != k for i, c in enumerate(corpora)]
        m = fit(corpora, keep)
        for i, c in enumerate(corpora):
            held = ~keep[i]
            oof[i][held] = tf.logits(m, c.rows, held)
    table = {t: [tf.decode(c, lg, t, MIN_TURNS) for c, lg in zip(corpora, oof)] for t in TAUS}
    tau = min(TAUS, key=lambda t: (float(np.mean([s["pk_a"] for s in table[t]])), -t))
    return fit(corpora), tau


def dec(tau):
    d = Decoder(tau, g=2.5, w=20, nmin=5, floor=tau - 1, min_turns=MIN_TURNS)
    d.per_episode = True
    return d


def decode_set(model, tau, dialogues, vecs):
    hyps = [stream(model, d, v, dec(tau)) for d, v in zip(dialogues, vecs)]
    return score(dialogues, hyps)


def noroles(name):
    return [dataclasses.replace(d, roles_known=False) for d in C[name][0]]


# Training corpora per recipe, as (corpus, fold-array key) lists
def sets(cand, names):
    out = []
    for n in names:
        if cand == "base":
            out.append((REAL[n], n))
        elif cand == "C1":
            out.append((REAL[n], n))
            if n != "tiage":
                out.append((MASK[n], n))
        elif cand == "C2u":  # roles-unknown model
            out.append((MASK[n], n))
    return out


res = {}
for cand in sys.argv[1:] or ("base", "C2", "C1"):
    CAND = cand
    r = {}
    # --- transfer
    for held in ("tiage", "sds"):
        others = [n for n in ("tiage", "sds", "agent") if n != held]
        sc = sets("C2u" if cand in ("C2", "C3", "C4") else cand, others)
        m, tau = recipe([c for c, _ in sc], [FOLD[k] for _, k in sc])
        s = decode_set(m, tau, noroles(held), VECS[held])
        r[f"transfer_{held}"] = {"tau": tau, **s.to_dict()}
        log(cand, "transfer", held, f"tau {tau} Pk {s.pk_a:.3f} ratio {s.boundary_ratio:.2f}")
    # --- OOF on the three train parts (roles as evaluated)
    all3 = ("tiage", "sds", "agent")
    if cand in ("C2", "C3", "C4"):
        # roles-known parts keep the base model: their OOF is base's by construction
        sc = sets("C2u", all3)
        _, tau = recipe([c for c, _ in sc], [FOLD[k] for _, k in sc])
        groups = [FOLD[k] for _, k in sc]
        for k in range(5):
            pass
        hyp = [None] * len(C["tiage"][0])
        for k in range(5):
            keep = [groups[i][np.asarray(c.rows.groups)] != k for i, (c, _) in enumerate(sc)]
            m = fit([c for c, _ in sc], keep)
            for g in np.flatnonzero(FOLD["tiage"] == k):
                hyp[g] = stream(m, C["tiage"][0][g], VECS["tiage"][g], dec(tau))
        s = score(C["tiage"][0], hyp)
        r["oof_tiage"] = {"tau": tau, **s.to_dict()}
        log(cand, "oof tiage", f"tau {tau} Pk {s.pk_a:.3f} ratio {s.boundary_ratio:.2f}")
    else:
        sc = sets(cand, all3)
        _, tau = recipe([c for c, _ in sc], [FOLD[k] for _, k in sc])
        hyps = {n: [None] * len(C[n][0]) for n in all3}
        for k in range(5):
            keep = [FOLD[key][np.asarray(c.rows.groups)] != k for c, key in sc]
            m = fit([c for c, _ in sc], keep)
            for n in all3:
                for g in np.flatnonzero(FOLD[n] == k):
                    hyps[n][g] = stream(m, C[n][0][g], VECS[n][g], dec(tau))
        for n in all3:
            s = score(C[n][0], hyps[n])
            r[f"oof_{n}"] = {"tau": tau, **s.to_dict()}
            log(cand, "oof", n, f"tau {tau} Pk {s.pk_a:.3f} ratio {s.boundary_ratio:.2f}")
    res[cand] = r
    json.dump(res, open(f"/work/scratch/H/third_{'_'.join(sys.argv[1:]) or 'all'}.json", "w"), indent=1)
