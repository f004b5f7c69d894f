import json, sys, numpy as np
sys.path.insert(0, '/work/main/src')
from episeg.evaluation.protocols import protocol_a
D='/work/shared/data/segmentation/'
FILES={'tiage_dev':D+'tiage/tiage_dev.jsonl','tiage_train':D+'tiage/tiage_train.jsonl',
 'sds':D+'superdialseg/superdialseg_validation.jsonl','agent':D+'agent_tau/agent_tau_dev.jsonl',
 'dialseg':D+'dialseg711/dialseg711.jsonl'}
_V=None
def vecs():
    global _V
    if _V is None:
        z=np.load('/work/scratch/s38/vectors.npz',allow_pickle=False)
        _V={str(t):v for t,v in zip(z['texts'],z['vectors'])}
    return _V
def load(name):
    V=vecs(); out=[]
    for l in open(FILES[name]):
        d=json.loads(l)
        E=np.array([V[t['text'][:2000]] for t in d['turns']],dtype=np.float64)
        E/=np.linalg.norm(E,axis=1,keepdims=True)+1e-12
        out.append((d,E))
    return out
def pk_mean(items, hyps):
    s=[protocol_a(d['boundaries'],h,len(d['turns'])) for (d,_),h in zip(items,hyps)]
    pk=np.mean([x.pk for x in s]); wd=np.mean([x.window_diff for x in s])
    ratio=sum(len(h) for h in hyps)/max(1,sum(len(d['boundaries']) for d,_ in items))
    return pk,wd,ratio
