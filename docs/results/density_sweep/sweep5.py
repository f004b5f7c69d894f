"""Augmentation: the SuperDialseg tune half also as roles-unknown rows (a 4th corpus), OOF + report."""
import json, time, pickle, dataclasses
from harness import *
import episeg.evaluation.train_fit as tf
import episeg.evaluation.train_rows as tr
import episeg.evaluation.train_segmenter as _ts
_ts._Rows = tr.TrainingRows
corpora = pickle.loads((CACHE / "rows.pkl").read_bytes())
ds, vs, _ = corpora["sds"]
nr = [dataclasses.replace(d, roles_known=False) for d in ds]
corpora["sds_noroles"] = (nr, vs, tr.teacher_forced("superdialseg", nr, vs, 0).rows)
rng = np.random.default_rng(0)
base_folds = {n: rng.permutation(len(c[0])) % 5 for n, c in list(corpora.items())[:3]}
fold_of = dict(base_folds); fold_of["sds_noroles"] = base_folds["sds"]  # same dialogue, same fold
tau = -0.25
out = {}
for label, names in (("base", ("tiage", "sds", "agent")), ("+sds_noroles", ("tiage", "sds", "agent", "sds_noroles"))):
    t0 = time.time()
    models = []
    for k in range(5):
        models.append(tf.fit([tr.subset(corpora[n][2], fold_of[n][np.asarray(corpora[n][2].groups)] != k) for n in names], dims=64, c=0.3, seed=0, lookahead=0))
    full = tf.fit([corpora[n][2] for n in names], dims=64, c=0.3, seed=0, lookahead=0)
    for dname, mk in (("fixed", lambda: Decoder(tau, min_turns=2)), ("ep-or", None)):
        if mk is None:
            def mk():
                d = Decoder(tau, g=2.5, w=20, nmin=5, floor=tau - 1, min_turns=2); d.per_episode = True; return d
        o = {}
        for n in ("tiage", "sds", "agent", "sds_noroles"):
            dd, vv, _ = corpora[n]
            hyps = [stream(models[fold_of[n][i]], d, v, mk()) for i, (d, v) in enumerate(zip(dd, vv))]
            o[n] = score(dd, hyps)
        r = report_eval(full, mk)
        mean3 = np.mean([o[k].pk_a for k in ("tiage", "sds", "agent")])
        print(f"{label:14s} {dname:6s} OOF {fmt(o)} mean3 {mean3:.3f} | REP {fmt(r)} ({time.time()-t0:.0f}s)", flush=True)
        out[f"{label} {dname}"] = {"oof": {k: s.to_dict() for k, s in o.items()}, "report": {k: s.to_dict() for k, s in r.items()}}
        json.dump(out, open("sweep5.json", "w"))
