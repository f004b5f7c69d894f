"""Third density pass, second round: C5 (no turn-embedding term), C6 (threshold by transfer).

Same harness, rows and rule as third.py. Never reads DialSeg711 or a report part.
"""
import dataclasses, json, pickle, sys, time
from pathlib import Path
sys.path.insert(0, "/work/scratch/E")
import numpy as np
import episeg.evaluation.train_segmenter as _ts, episeg.evaluation.train_rows as tr
_ts._Rows = tr.TrainingRows
import episeg.evaluation.train_fit as tf
from harness import Decoder, stream, score, CACHE

TAUS = tuple(round(-2.0 + 0.125 * i, 3) for i in range(25))
MIN_TURNS = 2
C = pickle.loads((CACHE / "rows.pkl").read_bytes())
H = Path("/work/scratch/H")
MASK = {"tiage": tr.Corpus("tiage", C["tiage"][0], C["tiage"][2]),
        "sds": pickle.loads((H / "masked_sds.pkl").read_bytes()),
        "agent": pickle.loads((H / "masked_agent.pkl").read_bytes())}
VECS = {n: C[n][1] for n in C}
rng = np.random.default_rng(0)
FOLD = {n: rng.permutation(len(C[n][0])) % 5 for n in ("tiage", "sds", "agent")}
ALL = ("tiage", "sds", "agent")
T0 = time.time()
TERMS = {}


def log(*a):
    print(f"[{time.time()-T0:6.0f}s]", *a, flush=True)


def fit(names, keep=None):
    tf.TERM_DIMS.clear()
    tf.TERM_DIMS.update(TERMS)
    rows = [MASK[n].rows if keep is None else tr.subset(MASK[n].rows, keep[i]) for i, n in enumerate(names)]
    return tf.fit(rows, dims=64, c=0.3, seed=0, lookahead=0)


def cv_tau(names):
    """The trainer's in-domain CV threshold over the masked corpora ``names``."""
    oof = [np.zeros(len(MASK[n].rows.labels)) for n in names]
    for k in range(5):
        keep = [FOLD[n][np.asarray(MASK[n].rows.groups)] != k for n in names]
        m = fit(names, keep)
        for i, n in enumerate(names):
            oof[i][~keep[i]] = tf.logits(m, MASK[n].rows, ~keep[i])
    table = {t: np.mean([tf.decode(MASK[n], lg, t, MIN_TURNS)["pk_a"] for n, lg in zip(names, oof)]) for t in TAUS}
    return min(TAUS, key=lambda t: (table[t], -t))


def transfer_tau(names):
    """Threshold by transfer: each corpus in ``names`` scored by a model on the others in ``names``."""
    lgs = {}
    for h in names:
        others = [n for n in names if n != h]
        m = fit(others)
        rows = MASK[h].rows
        lgs[h] = tf.logits(m, rows, np.ones(len(rows.labels), bool))
    table = {t: np.mean([tf.decode(MASK[h], lgs[h], t, MIN_TURNS)["pk_a"] for h in names]) for t in TAUS}
    return min(TAUS, key=lambda t: (table[t], -t)), {t: round(float(v), 4) for t, v in table.items()}


def dec(tau):
    d = Decoder(tau, g=2.5, w=20, nmin=5, floor=tau - 1, min_turns=MIN_TURNS)
    d.per_episode = True
    return d


def noroles(name):
    return [dataclasses.replace(d, roles_known=False) for d in C[name][0]]


res = {}
for cand in sys.argv[1:]:
    TERMS.clear()
    if cand == "C5":
        TERMS.update({"turn": 0})
    r = {}
    for held in ("tiage", "sds"):
        others = [n for n in ALL if n != held]
        if cand == "C6":
            tau, table = transfer_tau(others)
            r[f"inner_table_{held}"] = table
        else:
            tau = cv_tau(others)
        m = fit(others)
        s = score(noroles(held), [stream(m, d, v, dec(tau)) for d, v in zip(noroles(held), VECS[held])])
        r[f"transfer_{held}"] = {"tau": tau, **s.to_dict()}
        log(cand, "transfer", held, f"tau {tau} Pk {s.pk_a:.3f} ratio {s.boundary_ratio:.2f}")
    if cand == "C6":
        tau, table = transfer_tau(list(ALL))
        r["shipped_table"] = table
    else:
        tau = cv_tau(list(ALL))
    hyp = [None] * len(C["tiage"][0])
    for k in range(5):
        keep = [FOLD[n][np.asarray(MASK[n].rows.groups)] != k for n in ALL]
        m = fit(list(ALL), keep)
        for g in np.flatnonzero(FOLD["tiage"] == k):
            hyp[g] = stream(m, C["tiage"][0][g], VECS["tiage"][g], dec(tau))
    s = score(C["tiage"][0], hyp)
    r["oof_tiage"] = {"tau": tau, **s.to_dict()}
    log(cand, "oof tiage", f"tau {tau} Pk {s.pk_a:.3f} ratio {s.boundary_ratio:.2f}")
    res[cand] = r
    json.dump(res, open(H / f"third2_{'_'.join(sys.argv[1:])}.json", "w"), indent=1)
