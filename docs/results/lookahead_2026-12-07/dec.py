"""Decode roles-unknown sets streaming with a boundary model file (harness, mirrors LearnedPolicy minus pivot)."""
import sys, json, numpy as np
sys.path.insert(0,'/work/main/src')
from common import *
from episeg.segmentation.model import BoundaryModel
from episeg.segmentation.adaptive import AdaptiveThreshold
from episeg.segmentation.features import EpisodeContext, TurnView, boundary_features
from episeg.evaluation.protocols import score_protocols
def views(d,E,known=False):
    return [TurnView.make(E[i], 'user', None, t['text']) for i,t in enumerate(d['turns'])]
def run(model, items, tau_shift=0.0, adaptive=True):
    m=model; L=m.lookahead; tau=m.threshold+tau_shift
    ad=AdaptiveThreshold.from_meta(m.meta.get('adaptive'), tau_shift) if adaptive else None
    mt=int(m.meta.get('min_turns',1)); hyps=[]
    for d,E in items:
        vs=views(d,E); ctx=EpisodeContext(); ctx.commit(vs[0]); b=[]
        for t in range(1,len(vs)):
            opens=False
            if ctx.count>=mt:
                x,e,a,bb=boundary_features(ctx, vs[t:t+L+1], lookahead=L, roles_known=False)
                z=m.logit(x,e,a,bb)
                cut=ad.cut_at(ctx.scores) if ad else None
                ctx.scores.append(z)
                opens = z>=tau or (cut is not None and z>=cut)
            if opens:
                b.append(t); ctx=EpisodeContext()
            ctx.commit(vs[t])
        hyps.append(b)
    s=score_protocols([d['boundaries'] for d,_ in items],hyps,[len(d['turns']) for d,_ in items])
    return s.pk_a, s.wd_a, s.boundary_ratio
if __name__=='__main__':
    sets={n:load(n) for n in sys.argv[2:]}
    for f in sys.argv[1].split(','):
        full=BoundaryModel.load(f); m=full.for_roles(False)
        print(f, 'L',m.lookahead,'tau',m.threshold, m.meta.get('adaptive'))
        for n,items in sets.items():
            for sh in (0.0,):
                print(f'  {n} shift {sh:+.2f}: Pk %.3f WD %.3f ratio %.2f'%run(m,items,sh), flush=True)
