"""Model-level variants: embedding-term dims / C; in-domain OOF + zero-shot proxy (train TIAGE+agent, score SDS tune roles dropped)."""
import json, sys, time, pickle, dataclasses
from harness import *
import episeg.evaluation.train_segmenter as ts
from episeg.segmentation.model import load_model

ROWS = CACHE / "rows.pkl"
if ROWS.is_file():
    corpora = pickle.loads(ROWS.read_bytes())
else:
    corpora = {}
    for name, (rel, part, _) in TRAIN.items():
        full = {"tiage": "tiage", "sds": "superdialseg", "agent": "agent_tau"}[name]
        ds = load(rel, part)
        vs = [vecs_of(d) for d in ds]
        corpora[name] = (ds, vs, ts._teacher_forced(full, ds, vs, 0).rows)
    ROWS.write_bytes(pickle.dumps(corpora))
print("rows ready", flush=True)
rng = np.random.default_rng(0)
fold_of = {n: rng.permutation(len(c[0])) % 5 for n, c in corpora.items()}
sds_nr = [dataclasses.replace(d, roles_known=False) for d in corpora["sds"][0]]

def run(label, dims=64, c=0.3, term_dims=None, taus=(-0.25,), min_turns=2):
    ts._TERM_DIMS.clear(); ts._TERM_DIMS.update(term_dims or {})
    t0 = time.time()
    models = []
    for k in range(5):
        fit_rows = [ts._subset(corpora[n][2], fold_of[n][np.asarray(corpora[n][2].groups)] != k) for n in corpora]
        models.append(ts._fit(fit_rows, dims=dims, c=c, seed=0, lookahead=0))
    loco = ts._fit([corpora["tiage"][2], corpora["agent"][2]], dims=dims, c=c, seed=0, lookahead=0)
    full = ts._fit([corpora[n][2] for n in corpora], dims=dims, c=c, seed=0, lookahead=0)
    for tau in taus:
        mk = lambda: Decoder(tau, min_turns=min_turns)
        o = {}
        for n, (ds, vs, _) in corpora.items():
            hyps = [stream(models[fold_of[n][i]], d, v, mk()) for i, (d, v) in enumerate(zip(ds, vs))]
            o[n] = score(ds, hyps)
        hyps = [stream(loco, d, v, mk()) for d, v in zip(sds_nr, corpora["sds"][1])]
        o["zs_sds_noroles"] = score(sds_nr, hyps)
        r = report_eval(full, mk)
        mean3 = np.mean([o[k].pk_a for k in ("tiage", "sds", "agent")])
        mean4 = np.mean([o[k].pk_a for k in ("tiage", "sds", "agent", "zs_sds_noroles")])
        print(f"{label} tau{tau:+.2f}: OOF {fmt(o)} mean3 {mean3:.3f} mean4 {mean4:.3f} | REP {fmt(r)} ({time.time()-t0:.0f}s)", flush=True)
        out[f"{label} tau{tau}"] = {"oof": {k: s.to_dict() for k, s in o.items()}, "report": {k: s.to_dict() for k, s in r.items()}}
        json.dump(out, open("sweep2.json", "w"))

out = {}
TAUS = (-0.75, -0.5, -0.25, 0.0)
run("base", taus=TAUS)
run("turn0", term_dims={"turn": 0}, taus=TAUS)
run("turn16", term_dims={"turn": 16}, taus=TAUS)
run("turn0 agree16", term_dims={"turn": 0, "agree": 16}, taus=TAUS)
run("all16", dims=16, taus=TAUS)
run("C0.1", c=0.1, taus=TAUS)
