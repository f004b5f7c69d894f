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
the lowest mean protocol-A Pk over the preset's corpora, unless the preset
pins it (``Preset.threshold``: the shipped file's recipe; ``--cv-threshold``
for a variant; the CV's arg-min is kept as ``cv_threshold`` in the metadata
and printed beside it); the judge band is the half-width around it holding
``--judge-share`` of the scored turns. The PCA is folded into three 384-dim
weight vectors (:meth:`BoundaryModel.save`). The metadata keeps the
out-of-fold scores at the threshold (``oof_at_threshold``) and the curve it
was chosen from (``oof_by_threshold``: per threshold, the mean Pk and each
corpus's Pk and ratio); the command prints the thresholds near the best,
because that curve can be flat (docs/RESULTS.md, "Converged fits").

The agent preset also trains, by the same recipe, a second model for streams
whose speaker roles are unknown (``BoundaryModel.roles_unknown``): on
role-masked copies of every corpus (SuperDialseg and agent_tau rows rebuilt as
TIAGE's are: every turn a row, role features zero), so that regime learns
task-oriented talk too, not TIAGE's chit-chat alone; its own threshold comes
from its own cross-validation, its band holds ``Preset.unknown_judge_share`` (chosen
with the offline judge in the loop: ``--judge-curve``). ``--no-roles-unknown-model`` skips it.

The steps live in :mod:`~episeg.evaluation.train_rows` (features, rows),
:mod:`~episeg.evaluation.train_fit` (fit, out-of-fold decode) and
:mod:`~episeg.evaluation.train_judge` (``--judge-curve``: the judge in the loop).

>>> sorted(PRESETS), PRESETS["agent"].weights
(['agent', 'chat'], 'boundary.npz')
"""

from __future__ import annotations

import argparse
import dataclasses
import logging
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from episeg.errors import ConfigError
from episeg.evaluation.datasets import default_data_root, read_jsonl, select_part
from episeg.evaluation.train_fit import CrossValidated, cross_validated, near_best_lines
from episeg.evaluation.train_judge import write_curve
from episeg.evaluation.train_presets import NEVER_READ, PRESETS, TRAIN_PARTS, Preset
from episeg.evaluation.train_presets import adaptive_meta as _adaptive
from episeg.evaluation.train_presets import file_record as _record
from episeg.evaluation.train_rows import (
    Corpus,
    embed_file,
    role_masked,
    stream_boundaries,
    teacher_forced,
    turn_views,
)
from episeg.segmentation.learned import WEIGHTS_DIR, BoundaryModel
from episeg.typing import Embedder

__all__ = ["PRESETS", "TRAIN_PARTS", "Preset", "main", "stream_boundaries", "train", "turn_views"]

log = logging.getLogger(__name__)


def train(
    *,
    data_root: Path,
    embedder: Embedder,
    preset: str = "agent",
    dims: int | None = None,
    c: float | None = None,
    seed: int = 0,
    folds: int = 5,
    lookahead: int | None = None,
    unknown_lookahead: int | None = None,
    judge_share: float = 0.1,
    unknown_judge_share: float | None = None,
    judge_curve: Path | None = None,
    cache_dir: Path | None = None,
    max_chars: int = 2000,
    roles_unknown_model: bool = True,
    pinned_threshold: bool = True,
) -> BoundaryModel:
    """Train one preset's model on its train parts under ``data_root`` (module docstring).

    ``lookahead`` / ``unknown_lookahead``: the later turns the main / the roles-unknown model
    reads (default: the preset's ``Preset.lookahead`` / ``Preset.unknown_lookahead``); the same
    for ``judge_share`` / ``unknown_judge_share``. ``judge_curve``: write the roles-unknown
    model's judged curve there (JSON).
    """
    if preset not in PRESETS:
        raise ConfigError(f"unknown preset {preset!r}; valid: {', '.join(PRESETS)}")
    spec = PRESETS[preset]
    lookahead = spec.lookahead if lookahead is None else lookahead
    unknown_lookahead = spec.unknown_lookahead if unknown_lookahead is None else unknown_lookahead
    shares = (unknown_judge_share, spec.unknown_judge_share, judge_share)
    unknown_share = next(s for s in shares if s is not None)
    if lookahead < 0 or unknown_lookahead < 0:
        raise ConfigError("lookahead must be >= 0")
    if judge_curve is not None and not (spec.roles_unknown_model and roles_unknown_model):
        raise ConfigError("--judge-curve reads the roles-unknown model, which this run skips")
    dims = spec.dims if dims is None else dims
    c = spec.c if c is None else c
    corpora: list[Corpus] = []
    vectors: list[list[np.ndarray]] = []
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
        vectors.append(embed_file(path, chosen, embedder, cache_dir, max_chars))
        corpora.append(teacher_forced(name, chosen, vectors[-1], lookahead))
        files.append(_record(name, rel, part, path, chosen))
        log.info("%s: %d dialogues, %d rows", name, len(chosen), len(corpora[-1].rows.labels))

    def recipe(
        chosen: list[Corpus], later: int, share: float, pinned: float | None = None
    ) -> CrossValidated:
        return cross_validated(
            chosen,
            dims=dims,
            c=c,
            seed=seed,
            folds=folds,
            lookahead=later,
            min_turns=spec.min_turns,
            judge_share=share,
            pinned=pinned,
        )

    settings = {
        "trained_on": files,
        "never_read": list(NEVER_READ),
        "preset": preset,
        "min_turns": spec.min_turns,
        "embedder": embedder.name,
        "embed_max_chars": max_chars,
        "seed": seed,
        "folds": folds,
        "pca_dims": dims,
        "C": c,
        "lookahead": lookahead,
        "judge_share": judge_share,
    }
    sub = None
    if spec.roles_unknown_model and roles_unknown_model:
        masked = [
            role_masked(cp, vecs, unknown_lookahead)
            for cp, vecs in zip(corpora, vectors, strict=True)
        ]
        dropped = [cp.name for cp in corpora if any(d.roles_known for d in cp.dialogues)]
        meta = {
            **settings,
            "lookahead": unknown_lookahead,
            "judge_share": unknown_share,
            "roles_known": False,
            "roles_dropped": dropped,
        }
        cv = recipe(masked, unknown_lookahead, unknown_share)
        if judge_curve is not None:  # the judge in the loop (train_judge): costs minutes
            write_curve(judge_curve, masked, cv, embedder, min_turns=spec.min_turns)
        sub = cv.shipped(meta, _adaptive(spec, cv.threshold))
    main_meta = {**settings, "roles_known": spec.roles_known}
    pin = spec.threshold if pinned_threshold else None
    cv = recipe(corpora, lookahead, judge_share, pin)
    return cv.shipped(main_meta, _adaptive(spec, cv.threshold), sub)


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="episeg train segmenter", description="Train the learned boundary model (seeded)."
    )
    root = "default: ../shared/data/segmentation next to the repository"
    p.add_argument("--data-root", type=Path, default=None, help=root)
    presets = "agent (default; tiage+superdialseg+agent_tau) or chat (tiage, no roles)"
    p.add_argument("--preset", choices=sorted(PRESETS), default="agent", help=presets)
    p.add_argument("--out", type=Path, help="weights file (.npz); default: the preset's own")
    p.add_argument("--dims", type=int, default=None, help="PCA dimensions per embedding term")
    p.add_argument("--C", dest="c", type=float, default=None, help="inverse L2 strength")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--folds", type=int, default=5)
    p.add_argument(
        "--lookahead",
        type=int,
        default=None,
        help="later turns the main model reads (default: the preset's, 0 for both)",
    )
    p.add_argument(
        "--unknown-lookahead",
        type=int,
        default=None,
        help="later turns the roles-unknown model reads (default: the preset's, 1 for agent)",
    )
    share = "share of hint-eligible turns in the judge's uncertain band"
    p.add_argument("--judge-share", type=float, default=0.1, help=share)
    unknown = f"{share}, roles-unknown model (default: the preset's, 0.05 for agent)"
    p.add_argument("--unknown-judge-share", type=float, help=unknown)
    curve = "write the roles-unknown model's curve with the offline judge in the loop (JSON)"
    p.add_argument("--judge-curve", type=Path, help=curve)
    p.add_argument("--cache-dir", type=Path, default=None, help="embedding cache (.npy)")
    cv = "the CV's threshold for the main model too, where the preset pins one"
    p.add_argument("--cv-threshold", dest="pinned_threshold", action="store_false", help=cv)
    p.add_argument(
        "--no-roles-unknown-model",
        dest="roles_unknown_model",
        action="store_false",
        help="skip the preset's roles-unknown model (role-masked copies of every corpus)",
    )
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
        unknown_lookahead=args.unknown_lookahead,
        judge_share=args.judge_share,
        unknown_judge_share=args.unknown_judge_share,
        judge_curve=args.judge_curve,
        cache_dir=args.cache_dir,
        roles_unknown_model=args.roles_unknown_model,
        pinned_threshold=args.pinned_threshold,
    )
    out = args.out or WEIGHTS_DIR / PRESETS[args.preset].weights
    model.save(out)
    print(f"wrote {out} ({out.stat().st_size} bytes)")
    for label, m in (("", model), ("roles-unknown model: ", model.roles_unknown)):
        if m is None:
            continue
        cv_tau = m.meta["cv_threshold"]
        how = "" if cv_tau == m.threshold else f" (pinned by the preset; CV arg-min {cv_tau:+.3f})"
        print(f"{label}threshold {m.threshold:+.3f}{how}, judge band +-{m.band:.3f}")
        for name, s in m.meta["oof_at_threshold"].items():
            print(
                f"  out-of-fold {name}: Pk {s['pk_a']:.3f} WD {s['wd_a']:.3f} "
                f"F1 {s['f1_a']:.3f} ratio {s['ratio']:.2f}"
            )
        print("\n".join(near_best_lines(m.meta["oof_by_threshold"], m.threshold)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
