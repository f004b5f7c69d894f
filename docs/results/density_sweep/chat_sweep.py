"""Chat preset: fixed threshold vs the adopted open-episode relative rule (OOF on TIAGE train, report parts, roles ignored)."""
import json, time, dataclasses
from harness import *
from episeg.segmentation.model import load_model
from episeg.segmentation.learned import CHAT_WEIGHTS
m = load_model(CHAT_WEIGHTS)
tau = m.threshold
res = fold_models("chat")
def ep(**kw):
    d = Decoder(tau, min_turns=1, **kw); d.per_episode = True; return d
V = {"fixed": lambda: Decoder(tau, min_turns=1),
     "ep-or g2.5 w20 n5 floor τ-1": lambda: ep(g=2.5, w=20, nmin=5, floor=tau - 1)}
REP = {k: (rel, part, False) for k, (rel, part, _) in REPORT.items()}
out = {}
for name, mk in V.items():
    o = oof_eval(res, mk, proxy=False)
    r = report_eval(m, mk, names=REP)
    print(f"chat {name}: OOF {fmt(o)} | REP {fmt(r)}", flush=True)
    out[name] = {"oof": {k: s.to_dict() for k, s in o.items()}, "report": {k: s.to_dict() for k, s in r.items()}}
json.dump(out, open("chat_sweep.json", "w"))
