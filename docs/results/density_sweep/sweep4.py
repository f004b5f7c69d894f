"""Adaptive threshold with the score history of the open episode only (checkpoint-safe)."""
import json, time, pickle, dataclasses
from harness import *
import episeg.evaluation.train_fit as tf
import episeg.evaluation.train_segmenter as _ts, episeg.evaluation.train_rows as _tr
_ts._Rows = _tr.TrainingRows
from episeg.segmentation.model import load_model
corpora = pickle.loads((CACHE / "rows.pkl").read_bytes())
sds_nr = [dataclasses.replace(d, roles_known=False) for d in corpora["sds"][0]]
m = load_model(None)
tau = -0.25
res = fold_models("agent")
loco = tf.fit([corpora["tiage"][2], corpora["agent"][2]], dims=64, c=0.3, seed=0, lookahead=0)
def ep(**kw):
    d = Decoder(tau, min_turns=2, **kw); d.per_episode = True; return d
V = {"fixed": lambda: Decoder(tau, min_turns=2)}
for g in (1.5, 2.0, 2.5):
    for nmin in (3, 5):
        V[f"ep-or g{g} w20 n{nmin} fl-1"] = (lambda g=g, nmin=nmin: ep(g=g, w=20, nmin=nmin, floor=tau - 1))
V["ep-or g2.0 w20 n3 fl-2"] = lambda: ep(g=2.0, w=20, nmin=3, floor=tau - 2)
out = {}
for name, mk in V.items():
    t0 = time.time()
    o = oof_eval(res, mk, proxy=False)
    hyps = [stream(loco, d, v, mk()) for d, v in zip(sds_nr, corpora["sds"][1])]
    o["zs_sds_noroles"] = score(sds_nr, hyps)
    r = report_eval(m, mk)
    mean3 = np.mean([o[k].pk_a for k in ("tiage", "sds", "agent")])
    mean4 = np.mean([o[k].pk_a for k in ("tiage", "sds", "agent", "zs_sds_noroles")])
    print(f"{name:26s} OOF {fmt(o)} mean3 {mean3:.3f} mean4 {mean4:.3f} | REP {fmt(r)} ({time.time()-t0:.0f}s)", flush=True)
    out[name] = {"oof": {k: s.to_dict() for k, s in o.items()}, "report": {k: s.to_dict() for k, s in r.items()}}
    json.dump(out, open("sweep4.json", "w"))
