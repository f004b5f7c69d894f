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
V = {}
for g in (2.5, 3.0):
    V[f"or g{g} w20 fl-1"] = (lambda g=g: Decoder(tau, g=g, w=20, floor=tau - 1.0, min_turns=2))
for g in (0.5, 1.0, 1.5):
    V[f"only g{g} w20"] = (lambda g=g: Decoder(tau, g=g, w=20, mode="only", min_turns=2))
for a, mm in ((0.5, 4.0), (1.0, 8.0)):
    V[f"prior a{a} m{mm}"] = (lambda a=a, mm=mm: Decoder(tau, prior=a, m=mm, min_turns=2))
for beta, w in ((1.0, 20), (1.0, 1000)):
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
    json.dump(out, open("sweep1b.json", "w"))
