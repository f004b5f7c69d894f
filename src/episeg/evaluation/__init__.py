"""Evaluate segmentation on dialogue topic-segmentation sets: metrics, data, baselines, runner.

Run ``python -m episeg.evaluation --configs texttiling,even,none --json out.json
--plot out.png`` (data default: ``../shared/data/segmentation`` next to the repo). Grid search:
``python -m episeg.evaluation.tune`` (:mod:`episeg.evaluation.tune`; it is not
imported here so that ``-m`` runs it cleanly).

>>> from episeg.evaluation import pk, window_diff
>>> pk([3], [3], n=6), window_diff([3], [], n=6)
(0.0, 0.5)
"""

from episeg.evaluation.baselines import (
    SegmentFn,
    all_boundaries,
    even_boundaries,
    make_baseline,
    no_boundaries,
    texttiling,
)
from episeg.evaluation.datasets import (
    Dialogue,
    default_data_files,
    default_data_root,
    hash_part,
    mean_segment_length,
    read_jsonl,
    select_part,
    tuning_dialogues,
)
from episeg.evaluation.metrics import (
    PRF,
    SegmentationError,
    boundaries_to_masses,
    boundary_prf,
    masses_to_boundaries,
    pk,
    window_diff,
    window_size,
)
from episeg.evaluation.runner import EvalResult, evaluate, main

__all__ = [
    "PRF",
    "Dialogue",
    "EvalResult",
    "SegmentFn",
    "SegmentationError",
    "all_boundaries",
    "boundaries_to_masses",
    "boundary_prf",
    "default_data_files",
    "default_data_root",
    "evaluate",
    "even_boundaries",
    "hash_part",
    "main",
    "make_baseline",
    "masses_to_boundaries",
    "mean_segment_length",
    "no_boundaries",
    "pk",
    "read_jsonl",
    "select_part",
    "texttiling",
    "tuning_dialogues",
    "window_diff",
    "window_size",
]
