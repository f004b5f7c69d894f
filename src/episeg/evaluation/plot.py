"""Plot Pk against judge calls per 1,000 turns, one marker per configuration.

Uses matplotlib's non-interactive Agg backend (no display needed). Each
dataset gets its own colour; configurations are labelled next to their point.

>>> import tempfile, pathlib
>>> from episeg.evaluation.runner import EvalResult
>>> r = EvalResult(name="even", dataset="demo", dialogues=1, turns=10, pk=0.4,
...                window_diff=0.45, precision=0.5, recall=0.5, f1=0.5, f1_tolerant=0.6,
...                tolerance=1, hyp_boundaries=2, ref_boundaries=2,
...                judge_calls_per_1k_turns=0.0, embed_calls_per_1k_turns=0.0, seconds=0.0)
>>> out = plot_pk_vs_judge_calls([r], pathlib.Path(tempfile.mkdtemp()) / "p.png")
>>> out.read_bytes()[:8] == b"\\x89PNG\\r\\n\\x1a\\n"
True
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from episeg.evaluation.runner import EvalResult

__all__ = ["plot_pk_vs_judge_calls"]


def plot_pk_vs_judge_calls(results: Sequence[EvalResult], path: str | Path, *,
                           title: str = "Pk vs judge cost (lower-left is better)") -> Path:
    """Scatter Pk (y) against judge calls per 1,000 turns (x) and save a PNG to ``path``."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig, ax = plt.subplots(figsize=(7.5, 5.0), dpi=110)
    datasets = sorted({r.dataset for r in results})
    markers = "osD^vP*X"
    for i, dataset in enumerate(datasets):
        rows = [r for r in results if r.dataset == dataset]
        ax.scatter([r.judge_calls_per_1k_turns for r in rows], [r.pk for r in rows],
                   label=dataset or "(unnamed)", marker=markers[i % len(markers)], s=40)
        for r in rows:
            ax.annotate(r.name, (r.judge_calls_per_1k_turns, r.pk), fontsize=7,
                        xytext=(4, 3), textcoords="offset points")
    ax.set_xlabel("judge calls per 1,000 turns")
    ax.set_ylabel("Pk (lower is better)")
    ax.set_title(title)
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, format="png")
    plt.close(fig)
    return path
