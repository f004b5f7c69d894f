import json, sys
rows = []
def cell(s): return f"{s['pk_a']:.3f} ({s['boundary_ratio']:.2f})"
def add(prefix, f, keep=None):
    d = json.load(open(f))
    for name, v in d.items():
        if keep and not keep(name): continue
        o, r = v["oof"], v["report"]
        zs = o.get("zs_sds_noroles")
        m3 = sum(o[k]["pk_a"] for k in ("tiage", "sds", "agent")) / 3
        rows.append((prefix + name, cell(o["tiage"]), cell(o["sds"]), cell(o["agent"]), cell(zs) if zs else "–", f"{m3:.3f}",
                     cell(r["tiage_dev"]), cell(r["sds_rep"]), cell(r["agent_rep"]), cell(r["dialseg711"])))
for a in sys.argv[1:]:
    prefix, f = a.split("=")
    add(prefix, f)
print("| variant | OOF TIAGE train | OOF SDS tune | OOF agent tune | zero-shot proxy | OOF mean (3) | TIAGE dev | SDS report | agent report | DialSeg711 |")
print("|---|---|---|---|---|---:|---|---|---|---|")
for r in rows: print("| " + " | ".join(r) + " |")
