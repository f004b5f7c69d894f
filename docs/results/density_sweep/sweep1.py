import json, sys, time
from harness import *
from episeg.segmentation.model import load_model
m = load_model(None)
tau = m.threshold
res = fold_models("agent")
# reference mean of scored OOF logits (for the shift decoder): from the train parts, streaming with fixed decoder
class Rec(Decoder):
    seen = []
    def decide(self, z, count):
        Rec.seen.append(z); return super().decide(z, count)
oof_eval(res, lambda: Rec(tau, min_turns=2), proxy=False)
ref = float(np.mean(Rec.seen)); print("ref mean logit", ref, "std", float(np.std(Rec.seen)), flush=True)
V = {"fixed": lambda: Decoder(tau, min_turns=2)}
for g in (1.5, 2.0, 2.5, 3.0):
    for w in (10, 20, 40):
        for fl in (None, tau - 1.0, tau - 2.0):
            V[f"or g{g} w{w} fl{fl if fl is None else round(fl-tau)}"] = (lambda g=g, w=w, fl=fl: Decoder(tau, g=g, w=w, floor=fl, min_turns=2))
for g in (0.5, 1.0, 1.5):
    V[f"only g{g} w20"] = (lambda g=g: Decoder(tau, g=g, w=20, mode="only", min_turns=2))
for a in (0.25, 0.5, 1.0):
    for mm in (4.0, 8.0):
        V[f"prior a{a} m{mm}"] = (lambda a=a, mm=mm: Decoder(tau, prior=a, m=mm, min_turns=2))
for beta in (0.5, 1.0):
    for w in (20, 1000):
        V[f"shift b{beta} w{w}"] = (lambda beta=beta, w=w: ShiftDecoder(tau, beta=beta, ref=ref, w=w, min_turns=2))
out = {}
for name, mk in V.items():
    t = time.time()
    o = oof_eval(res, mk)
    r = report_eval(m, mk)
    out[name] = {"oof": {k: s.to_dict() for k, s in o.items()}, "report": {k: s.to_dict() for k, s in r.items()}}
    mean3 = np.mean([o[k].pk_a for k in ("tiage", "sds", "agent")])
    mean4 = np.mean([o[k].pk_a for k in ("tiage", "sds", "agent", "sds_noroles")])
    print(f"{name:28s} OOF {fmt(o)} mean3 {mean3:.3f} mean4 {mean4:.3f} | REP {fmt(r)} ({time.time()-t:.0f}s)", flush=True)
    json.dump(out, open("sweep1.json", "w"))
