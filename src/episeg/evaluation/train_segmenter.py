"""Train the learned boundary model (``episeg train segmenter``).

Also ``python -m episeg.evaluation.train_segmenter``.

Two presets, each its own weights file next to the model card
``segmentation/weights/MODEL_CARD.md``:

- ``agent`` (the default, ``boundary.npz``): trained on three DEV train parts;
- ``chat`` (``chat.npz``, open-domain chat, speaker roles ignored): trained on
  ``tiage_train`` only.

Data (DEV only; see ``../shared/data/segmentation/README.md``), the *train*
parts, never a report part:

=========================== =========================================== ===========
corpus                      part trained on                             roles
=========================== =========================================== ===========
tiage/tiage_train.jsonl     the whole file (300 dialogues)              synthetic
superdialseg_validation     hash-``tune`` half (:func:`hash_part`)      real
agent_tau_dev.jsonl         task-``tune`` part, re-spliced              real + types
=========================== =========================================== ===========

DialSeg711 is never read (it is a test set in the literature). Reported
parts: ``tiage_dev``, the SuperDialseg hash-``report`` half, the agent_tau
task-``report`` part (:mod:`episeg.evaluation.datasets`).

Steps, all seeded: embed every turn once (MiniLM, optional ``--cache-dir``);
features per turn against the *gold* open episode (teacher forcing,
:mod:`episeg.segmentation.features`), kept for the turns hints may cut
(user and system turns where roles are real, every turn where they are not:
an assistant or tool turn never opens an episode on the model's word, so it
is no evidence either way); PCA (``--dims``) of the three embedding terms
fitted on the training rows; a logistic regression (``--C``) with each
corpus weighing the same in total; the threshold chosen by 5-fold
cross-validation *within* the train parts (folds by dialogue): the one with
the lowest mean protocol-A Pk over the preset's corpora; the judge band is
the half-width around it holding ``--judge-share`` of the scored turns. The
PCA is folded into three 384-dim weight vectors, saved with
:meth:`BoundaryModel.save`.

>>> rows = _Rows(names=("a",))
>>> rows.add(np.array([1.0]), *(np.zeros(2),) * 3, label=True, eligible=True, group=0, t=1)
>>> rows.matrix().shape, rows.y.tolist()
((1, 1), [1])
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from episeg.errors import ConfigError
from episeg.evaluation.datasets import Dialogue, default_data_root, read_jsonl, select_part
from episeg.evaluation.protocols import score_protocols
from episeg.segmentation.features import (
    EpisodeContext,
    TurnView,
    boundary_features,
    feature_names,
)
from episeg.segmentation.learned import WEIGHTS_DIR, BoundaryModel
from episeg.typing import Embedder

__all__ = ["PRESETS", "TRAIN_PARTS", "Preset", "main", "stream_boundaries", "train", "turn_views"]

log = logging.getLogger(__name__)

TRAIN_PARTS: tuple[tuple[str, str, str], ...] = (
    ("tiage", "tiage/tiage_train.jsonl", "tune"),
    ("superdialseg", "superdialseg/superdialseg_validation.jsonl", "tune"),
    ("agent_tau", "agent_tau/agent_tau_dev.jsonl", "tune"),
)
"""(corpus, file under the data root, part): every train part there is."""


@dataclass(frozen=True)
class Preset:
    """What one shipped weights file is trained on, and how."""

    name: str
    corpora: tuple[str, ...]
    dims: int
    c: float
    roles_known: bool
    weights: str
    min_turns: int = 1


PRESETS = {
    "agent": Preset(
        "agent", ("tiage", "superdialseg", "agent_tau"), 64, 0.3, True, "boundary.npz", min_turns=2
    ),
    "chat": Preset("chat", ("tiage",), 64, 0.1, False, "chat.npz"),
}
LICENCES = {
    "tiage": "MIT (HuiyuanXie/tiage); dialogues from PersonaChat (ParlAI)",
    "superdialseg": "Apache-2.0 (SuperDialseg dataset card); built on doc2dial / MultiDoc2Dial",
    "agent_tau": "MIT (sierra-research/tau-bench historical trajectories)",
}
HINT_ACTORS = ("user", "system")
_TERM_DIMS: dict[str, int] = {}
_TAUS = tuple(round(-2.0 + 0.125 * i, 3) for i in range(25))


def turn_views(dialogue: Dialogue, vectors: np.ndarray) -> list[TurnView]:
    """Feature views of a dialogue's turns; roles and types dropped where they are synthetic."""
    known = dialogue.roles_known
    return [
        TurnView.make(
            v,
            t.actor.value if known else "user",
            t.type.value if known and t.type is not None else None,
            t.text,
        )
        for t, v in zip(dialogue.turns, vectors, strict=True)
    ]


Decide = Callable[[int, np.ndarray, np.ndarray, np.ndarray, np.ndarray], bool]


def stream_boundaries(
    views: Sequence[TurnView], *, lookahead: int, roles_known: bool, decide: Decide
) -> list[int]:
    """Run features turn by turn; ``decide(t, x, e, a, b)`` says whether turn ``t`` opens."""
    if not views:
        return []
    context = EpisodeContext()
    context.commit(views[0])
    bounds: list[int] = []
    for t in range(1, len(views)):
        x, e, a, b = boundary_features(
            context, views[t : t + lookahead + 1], lookahead=lookahead, roles_known=roles_known
        )
        if decide(t, x, e, a, b):
            bounds.append(t)
            context = EpisodeContext()
        context.commit(views[t])
    return bounds


@dataclass
class _Rows:
    names: tuple[str, ...]
    x: list[np.ndarray] = field(default_factory=list)
    e: list[np.ndarray] = field(default_factory=list)
    a: list[np.ndarray] = field(default_factory=list)
    b: list[np.ndarray] = field(default_factory=list)
    labels: list[int] = field(default_factory=list)
    eligible: list[bool] = field(default_factory=list)
    groups: list[int] = field(default_factory=list)
    ts: list[int] = field(default_factory=list)

    def add(
        self,
        x: np.ndarray,
        e: np.ndarray,
        a: np.ndarray,
        b: np.ndarray,
        *,
        label: bool,
        eligible: bool,
        group: int,
        t: int,
    ) -> None:
        self.x.append(x)
        self.e.append(e)
        self.a.append(a)
        self.b.append(b)
        self.labels.append(int(label))
        self.eligible.append(eligible)
        self.groups.append(group)
        self.ts.append(t)

    def matrix(self) -> np.ndarray:
        return np.asarray(self.x)

    @property
    def y(self) -> np.ndarray:
        return np.asarray(self.labels)

    def terms(self) -> dict[str, np.ndarray]:
        e, a, b = np.asarray(self.e), np.asarray(self.a), np.asarray(self.b)
        return {"turn": e, "shift": a - b, "agree": a * b}


@dataclass
class _Corpus:
    name: str
    dialogues: list[Dialogue]
    rows: _Rows


def _teacher_forced(
    name: str, dialogues: list[Dialogue], vectors: list[np.ndarray], lookahead: int
) -> _Corpus:
    rows = _Rows(names=feature_names(lookahead))
    for g, (d, vecs) in enumerate(zip(dialogues, vectors, strict=True)):
        gold = set(d.boundaries)
        views = turn_views(d, vecs)

        def decide(
            t: int,
            x: np.ndarray,
            e: np.ndarray,
            a: np.ndarray,
            b: np.ndarray,
            *,
            _d: Dialogue = d,
            _g: int = g,
            _gold: set[int] = gold,
        ) -> bool:
            if not _d.roles_known or _d.turns[t].actor.value in HINT_ACTORS:
                rows.add(x, e, a, b, label=t in _gold, eligible=True, group=_g, t=t)
            return t in _gold

        stream_boundaries(views, lookahead=lookahead, roles_known=d.roles_known, decide=decide)
    return _Corpus(name, dialogues, rows)


def _embed_file(
    path: Path,
    dialogues: list[Dialogue],
    embedder: Embedder,
    cache_dir: Path | None,
    max_chars: int,
) -> list[np.ndarray]:
    texts = [t.text[:max_chars] for d in dialogues for t in d.turns]
    key = hashlib.sha256("\x1e".join([embedder.name, *texts]).encode()).hexdigest()[:20]
    cached = cache_dir / f"{path.stem}-{key}.npy" if cache_dir else None
    if cached is not None and cached.is_file():
        matrix = np.load(cached)
    else:
        log.info("embedding %d turns of %s", len(texts), path.name)
        matrix = np.asarray(embedder.embed(texts), dtype=np.float32)
        if cached is not None:
            cached.parent.mkdir(parents=True, exist_ok=True)
            np.save(cached, matrix)
    out, pos = [], 0
    for d in dialogues:
        out.append(matrix[pos : pos + len(d)])
        pos += len(d)
    return out


def _fit(
    corpora: Sequence[_Rows], *, dims: int, c: float, seed: int, lookahead: int
) -> BoundaryModel:
    from sklearn.decomposition import PCA
    from sklearn.linear_model import LogisticRegression
    from sklearn.preprocessing import StandardScaler

    names = corpora[0].names
    terms = [r.terms() for r in corpora]
    pcas = {}
    for term in ("turn", "shift", "agree"):
        k = _TERM_DIMS.get(term, dims)
        if k == 0:
            continue
        stacked = np.concatenate([t[term] for t in terms])
        pcas[term] = PCA(k, svd_solver="full", random_state=seed).fit(stacked)
    design = [
        np.hstack([r.matrix(), *(pcas[k].transform(t[k]) for k in pcas)])
        for r, t in zip(corpora, terms, strict=True)
    ]
    weights = np.concatenate([np.full(len(r.labels), 1.0 / len(r.labels)) for r in corpora])
    x = np.concatenate(design)
    y = np.concatenate([r.y for r in corpora])
    scaler = StandardScaler().fit(x)
    lr = LogisticRegression(C=c, max_iter=5000, random_state=seed)
    lr.fit(scaler.transform(x), y, sample_weight=weights / weights.mean())
    coef = lr.coef_[0] / scaler.scale_
    bias = float(lr.intercept_[0] - coef @ scaler.mean_)
    nh = len(names)
    vectors, offset = {}, nh
    for term, pca in pcas.items():
        k = pca.n_components_
        part = coef[offset : offset + k]
        vectors[term] = part @ pca.components_
        bias -= float(part @ pca.components_ @ pca.mean_)
        offset += k
    # Contributions are read against the average *candidate* turn (hint-eligible rows).
    eligible = np.concatenate([np.asarray(r.eligible) for r in corpora])
    all_terms = {k: np.concatenate([t[k] for t in terms])[eligible] for k in pcas}
    return BoundaryModel(
        names=names,
        weights=coef[:nh].copy(),
        bias=bias,
        vectors=vectors,
        lookahead=lookahead,
        threshold=0.0,
        band=0.0,
        means=np.concatenate([r.matrix() for r in corpora])[eligible].mean(axis=0),
        vector_means={k: v.mean(axis=0) for k, v in all_terms.items()},
    )


def _logits(model: BoundaryModel, rows: _Rows, mask: np.ndarray) -> np.ndarray:
    x = rows.matrix()[mask]
    t = {k: v[mask] for k, v in rows.terms().items()}
    out = model.bias + x @ model.weights
    for k, w in model.vectors.items():
        out = out + t[k] @ w
    return np.asarray(out)


def _decode(
    corpus: _Corpus, logits: np.ndarray, tau: float, min_turns: int = 1
) -> dict[str, float]:
    """Threshold the (teacher-forced) out-of-fold logits; protocol-A scores of the result.

    A cut needs at least ``min_turns`` turns in the open episode before it.
    """
    rows = corpus.rows
    hyps: list[list[int]] = [[] for _ in corpus.dialogues]
    for g, t, ok, z in zip(rows.groups, rows.ts, rows.eligible, logits, strict=True):
        last = hyps[g][-1] if hyps[g] else 0
        if ok and z >= tau and t - last >= min_turns:
            hyps[g].append(t)
    s = score_protocols(
        [d.boundaries for d in corpus.dialogues], hyps, [len(d) for d in corpus.dialogues]
    )
    return {"pk_a": s.pk_a, "wd_a": s.wd_a, "f1_a": s.f1_a, "ratio": s.boundary_ratio}


def train(
    *,
    data_root: Path,
    embedder: Embedder,
    preset: str = "agent",
    dims: int | None = None,
    c: float | None = None,
    seed: int = 0,
    folds: int = 5,
    lookahead: int = 0,
    judge_share: float = 0.1,
    cache_dir: Path | None = None,
    max_chars: int = 2000,
) -> BoundaryModel:
    """Train one preset's model on its train parts under ``data_root`` (module docstring)."""
    if preset not in PRESETS:
        raise ConfigError(f"unknown preset {preset!r}; valid: {', '.join(PRESETS)}")
    spec = PRESETS[preset]
    dims = spec.dims if dims is None else dims
    c = spec.c if c is None else c
    corpora: list[_Corpus] = []
    files: list[dict[str, Any]] = []
    for name, rel, part in TRAIN_PARTS:
        if name not in spec.corpora:
            continue
        path = data_root / rel
        if not path.is_file():
            raise ConfigError(f"training file {path} is missing")
        chosen = select_part(path, read_jsonl(path), part)  # type: ignore[arg-type]
        if not spec.roles_known:
            chosen = [dataclasses.replace(d, roles_known=False) for d in chosen]
        vectors = _embed_file(path, chosen, embedder, cache_dir, max_chars)
        corpora.append(_teacher_forced(name, chosen, vectors, lookahead))
        files.append(
            {
                "corpus": name,
                "file": rel,
                "part": part,
                "sha256": hashlib.sha256(path.read_bytes()).hexdigest(),
                "dialogues": len(chosen),
                "turns": sum(len(d) for d in chosen),
                "boundaries": sum(len(d.boundaries) for d in chosen),
                "licence": LICENCES[name],
            }
        )
        log.info("%s: %d dialogues, %d rows", name, len(chosen), len(corpora[-1].rows.labels))
    rng = np.random.default_rng(seed)
    fold_of = [rng.permutation(len(cp.dialogues)) % folds for cp in corpora]
    oof = [np.zeros(len(cp.rows.labels)) for cp in corpora]
    for k in range(folds):
        fit_rows = [
            _subset(cp.rows, fo[np.asarray(cp.rows.groups)] != k)
            for cp, fo in zip(corpora, fold_of, strict=True)
        ]
        model = _fit(fit_rows, dims=dims, c=c, seed=seed, lookahead=lookahead)
        for i, (corpus, fo) in enumerate(zip(corpora, fold_of, strict=True)):
            held = fo[np.asarray(corpus.rows.groups)] == k
            oof[i][held] = _logits(model, corpus.rows, held)
    table = {
        tau: [_decode(cp, lg, tau, spec.min_turns) for cp, lg in zip(corpora, oof, strict=True)]
        for tau in _TAUS
    }
    tau = min(_TAUS, key=lambda t: (float(np.mean([s["pk_a"] for s in table[t]])), -t))
    eligible = np.concatenate([np.asarray(cp.rows.eligible) for cp in corpora])
    margins = np.sort(np.abs(np.concatenate(oof)[eligible] - tau))
    band = float(margins[min(len(margins) - 1, int(judge_share * len(margins)))])
    final = _fit([cp.rows for cp in corpora], dims=dims, c=c, seed=seed, lookahead=lookahead)
    meta = {
        "trained_on": files,
        "never_read": [
            "dialseg711/dialseg711.jsonl",
            "tiage/tiage_dev.jsonl",
            "superdialseg_validation hash-report half",
            "agent_tau_dev task-report part",
        ],
        "preset": preset,
        "roles_known": spec.roles_known,
        "min_turns": spec.min_turns,
        "embedder": embedder.name,
        "embed_max_chars": max_chars,
        "seed": seed,
        "folds": folds,
        "pca_dims": dims,
        "C": c,
        "lookahead": lookahead,
        "judge_share": judge_share,
        "threshold": tau,
        "band": band,
        "oof_at_threshold": {cp.name: s for cp, s in zip(corpora, table[tau], strict=True)},
    }
    return BoundaryModel(
        names=final.names,
        weights=final.weights,
        bias=final.bias,
        vectors=final.vectors,
        lookahead=lookahead,
        threshold=tau,
        band=band,
        means=final.means,
        vector_means=final.vector_means,
        meta=meta,
    )


def _subset(rows: _Rows, keep: np.ndarray) -> _Rows:
    idx = np.flatnonzero(keep)
    out = _Rows(names=rows.names)
    for i in idx:
        out.add(
            rows.x[i],
            rows.e[i],
            rows.a[i],
            rows.b[i],
            label=bool(rows.labels[i]),
            eligible=rows.eligible[i],
            group=rows.groups[i],
            t=rows.ts[i],
        )
    return out


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="episeg train segmenter", description="Train the learned boundary model (seeded)."
    )
    p.add_argument(
        "--data-root",
        type=Path,
        default=None,
        help="default: ../shared/data/segmentation next to the repository",
    )
    p.add_argument(
        "--preset",
        choices=sorted(PRESETS),
        default="agent",
        help="agent (default; tiage+superdialseg+agent_tau) or chat (tiage, no roles)",
    )
    p.add_argument(
        "--out",
        type=Path,
        default=None,
        help="weights file (.npz); default: the preset's shipped file",
    )
    p.add_argument("--dims", type=int, default=None, help="PCA dimensions per embedding term")
    p.add_argument("--C", dest="c", type=float, default=None, help="inverse L2 strength")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--folds", type=int, default=5)
    p.add_argument("--lookahead", type=int, default=0, help="later turns the features read")
    p.add_argument(
        "--judge-share",
        type=float,
        default=0.1,
        help="share of hint-eligible turns in the judge's uncertain band",
    )
    p.add_argument("--cache-dir", type=Path, default=None, help="embedding cache (.npy)")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    """Command-line entry point."""
    from episeg.embedders import MiniLMEmbedder

    argv = list(argv) if argv is not None else None
    if argv and argv[0] == "segmenter":  # ``episeg train segmenter ...``
        argv = argv[1:]
    args = _parser().parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    root = args.data_root or default_data_root()
    if root is None:
        raise ConfigError("no data root found; pass --data-root")
    model = train(
        data_root=root,
        embedder=MiniLMEmbedder.default(),
        preset=args.preset,
        dims=args.dims,
        c=args.c,
        seed=args.seed,
        folds=args.folds,
        lookahead=args.lookahead,
        judge_share=args.judge_share,
        cache_dir=args.cache_dir,
    )
    out = args.out or WEIGHTS_DIR / PRESETS[args.preset].weights
    model.save(out)
    oof = model.meta["oof_at_threshold"]
    print(
        f"wrote {out} ({out.stat().st_size} bytes): threshold {model.threshold:+.3f}, "
        f"judge band +-{model.band:.3f}"
    )
    for name, s in oof.items():
        print(
            f"  out-of-fold {name}: Pk {s['pk_a']:.3f} WD {s['wd_a']:.3f} "
            f"F1 {s['f1_a']:.3f} ratio {s['ratio']:.2f}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
