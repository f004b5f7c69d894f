import sys, time, json
src=sys.argv[1]; sys.path.insert(0, src)
from episeg.benchmarks.segment_bench import overhead_per_turn
from episeg.benchmarks.timing import load_texts
from episeg.defaults import default_embedder
import episeg; assert episeg.__file__.startswith(src), episeg.__file__
emb=default_embedder()
rows=load_texts('/work/shared/data/segmentation/superdialseg/superdialseg_validation.jsonl', 1000)
texts=[t for _,_,t in rows]
overhead_per_turn(texts, embedder=emb, n_turns=500)
r=[overhead_per_turn(texts, embedder=emb, n_turns=3000)['us_per_turn'] for _ in range(3)]
print(src, sorted(r))
