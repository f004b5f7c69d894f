"""Density experiments: OOF streaming decode on train parts, plus report parts, for decoder variants."""
from __future__ import annotations

import dataclasses
import math
import pickle
import sys
from collections import deque
from pathlib import Path

import numpy as np

from episeg.evaluation import train_segmenter as ts
from episeg.evaluation import train_rows as tr, train_fit as tf
from episeg.evaluation.datasets import read_jsonl, select_part
from episeg.evaluation.protocols import score_protocols
from episeg.segmentation.features import EpisodeContext, boundary_features
from episeg.segmentation.model import BoundaryModel

D = Path("/work/shared/data/segmentation")
CACHE = Path("/work/scratch/E/cache")
CACHE.mkdir(exist_ok=True)
_V: dict[str, np.ndarray] = {}


def vectors() -> dict[str, np.ndarray]:
    if not _V:
        with np.load("/work/scratch/seg/eval/vectors.npz") as d:
            for t, v in zip(d["texts"], d["vectors"], strict=True):
                _V[str(t)] = v
    return _V


def vecs_of(d):
    V = vectors()
    return np.stack([V[t.text[:2000]] for t in d.turns]).astype(np.float32)


def load(rel, part, roles=None):
    ds = select_part(D / rel, read_jsonl(D / rel), part)
    if roles is False:
        ds = [dataclasses.replace(d, roles_known=False) for d in ds]
    return ds


class Decoder:
    """Fixed threshold + optional adaptive (running mean + g*std) + optional length prior."""

    def __init__(self, tau, *, g=None, w=20, nmin=5, floor=None, mode="or", prior=0.0, m=4.0,
                 min_turns=1, window=64):
        self.tau, self.g, self.w, self.nmin, self.floor = tau, g, w, nmin, floor
        self.mode, self.prior, self.m, self.min_turns, self.window = mode, prior, m, min_turns, window
        self.hist: deque[float] = deque(maxlen=w)

    def reset(self):
        self.hist = deque(maxlen=self.w)

    def decide(self, z, count):
        if self.prior:
            z = z + self.prior * math.log(max(count, 1) / self.m)
        cut = z >= self.tau
        if self.g is not None and len(self.hist) >= self.nmin:
            arr = np.fromiter(self.hist, float)
            thr = float(arr.mean() + self.g * arr.std())
            rel = z >= thr and (self.floor is None or z >= self.floor)
            cut = (cut or rel) if self.mode == "or" else (rel and (self.floor is not None or cut))
            if self.mode == "only":
                cut = rel
        self.hist.append(z)
        return cut


def stream(model: BoundaryModel, d, vecs, dec: Decoder):
    views = tr.turn_views(d, vecs)
    dec.reset()
    ctx = EpisodeContext()
    ctx.commit(views[0])
    out = []
    known = d.roles_known
    for t in range(1, len(views)):
        cut = False
        if ctx.count >= dec.window:
            cut = True
        elif (not known or d.turns[t].actor.value in ("user", "system")) and ctx.count >= dec.min_turns:
            x, e, a, b = boundary_features(ctx, views[t : t + 1], lookahead=0, roles_known=known)
            cut = dec.decide(model.logit(x, e, a, b), ctx.count)
        if cut:
            out.append(t)
            ctx = EpisodeContext()
            if getattr(dec, "per_episode", False):
                dec.hist.clear()
        ctx.commit(views[t])
    return out


def score(ds, hyps):
    s = score_protocols([d.boundaries for d in ds], hyps, [len(d) for d in ds])
    return s


TRAIN = {
    "tiage": ("tiage/tiage_train.jsonl", "tune", None),
    "sds": ("superdialseg/superdialseg_validation.jsonl", "tune", None),
    "agent": ("agent_tau/agent_tau_dev.jsonl", "tune", None),
}
REPORT = {
    "tiage_dev": ("tiage/tiage_dev.jsonl", "report", None),
    "sds_rep": ("superdialseg/superdialseg_validation.jsonl", "report", None),
    "agent_rep": ("agent_tau/agent_tau_dev.jsonl", "report", None),
    "dialseg711": ("dialseg711/dialseg711.jsonl", "report", None),
}


def fold_models(preset="agent", folds=5, seed=0, extra=None):
    """Per train corpus: list of (dialogue, vecs, fold model) with OOF models (cached)."""
    key = CACHE / f"folds_{preset}_{extra or 'base'}.pkl"
    if key.is_file():
        return pickle.loads(key.read_bytes())
    spec = ts.PRESETS[preset]
    corpora = []
    for name, (rel, part, _) in TRAIN.items():
        full = {"tiage": "tiage", "sds": "superdialseg", "agent": "agent_tau"}[name]
        if full not in spec.corpora:
            continue
        ds = load(rel, part, None if spec.roles_known else False)
        vs = [vecs_of(d) for d in ds]
        corpora.append((name, ds, vs, tr.teacher_forced(full, ds, vs, 0)))
    rng = np.random.default_rng(seed)
    fold_of = [rng.permutation(len(c[1])) % folds for c in corpora]
    models = []
    for k in range(folds):
        fit_rows = [tr.subset(c[3].rows, fo[np.asarray(c[3].rows.groups)] != k)
                    for c, fo in zip(corpora, fold_of, strict=True)]
        models.append(tf.fit(fit_rows, dims=spec.dims, c=spec.c, seed=seed, lookahead=0))
    out = {name: (ds, vs, fo, ) for (name, ds, vs, _), fo in zip(corpora, fold_of, strict=True)}
    res = {"models": models, "corpora": out}
    key.write_bytes(pickle.dumps(res))
    return res


def oof_eval(res, make_dec, proxy=True):
    """OOF streaming Pk per train corpus (+ SDS tune with roles dropped as a transfer proxy)."""
    scores = {}
    for name, (ds, vs, fo) in res["corpora"].items():
        sets = [(name, ds)]
        if proxy and name == "sds":
            sets.append(("sds_noroles", [dataclasses.replace(d, roles_known=False) for d in ds]))
        for label, dd in sets:
            hyps = [stream(res["models"][fo[i]], d, v, make_dec()) for i, (d, v) in enumerate(zip(dd, vs))]
            scores[label] = score(dd, hyps)
    return scores


def report_eval(model, make_dec, names=REPORT):
    scores = {}
    for name, (rel, part, roles) in names.items():
        ds = load(rel, part, roles)
        hyps = [stream(model, d, vecs_of(d), make_dec()) for d in ds]
        scores[name] = score(ds, hyps)
    return scores


def fmt(scores):
    return "  ".join(f"{k} {s.pk_a:.3f}/{s.boundary_ratio:.2f}" for k, s in scores.items())


if __name__ == "__main__":
    print(sys.argv)


class ShiftDecoder(Decoder):
    """Threshold moved by beta * (running mean of this conversation's scores - reference mean)."""

    def __init__(self, tau, *, beta, ref, w=20, nmin=5, min_turns=1, window=64):
        super().__init__(tau, w=w, nmin=nmin, min_turns=min_turns, window=window)
        self.beta, self.ref = beta, ref

    def decide(self, z, count):
        thr = self.tau
        if len(self.hist) >= self.nmin:
            thr = self.tau + self.beta * (float(np.mean(self.hist)) - self.ref)
        self.hist.append(z)
        return z >= thr
