"""Render evaluation results: a terminal table, a JSON file for machines, a PNG plot.

The plot (:func:`plot_pk_vs_judge_calls`) puts Pk against judge calls per 1,000
turns, one marker per configuration and a colour per dataset, through
matplotlib's non-interactive Agg backend (no display needed).

>>> from episeg.evaluation.results import EvalResult
>>> r = EvalResult(name="none", dataset="demo", dialogues=2, turns=20, pk=0.5,
...                window_diff=0.5, precision=0.0, recall=0.0, f1=0.0, f1_tolerant=0.0,
...                tolerance=1, hyp_boundaries=0, ref_boundaries=4,
...                judge_calls_per_1k_turns=0.0, embed_calls_per_1k_turns=0.0, seconds=0.01,
...                pk_a=0.5, wd_a=0.5, f1_a=0.0, score_a=0.25, pk_b=0.5, wd_b=0.5, f1_b=0.0,
...                boundary_ratio=0.0)
>>> format_table([r]).splitlines()[2].split()[:10]
['demo', 'none', '0.500', '0.500', '0.000', '0.250', '0.500', '0.500', '0.000', '0.00']
>>> results_from_dict(results_to_dict([r]))[0] == r
True
>>> import tempfile, pathlib
>>> png = plot_pk_vs_judge_calls([r], pathlib.Path(tempfile.mkdtemp()) / "p.png")
>>> png.read_bytes()[:8] == b"\\x89PNG\\r\\n\\x1a\\n"
True
"""

from __future__ import annotations

import json
import platform
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from episeg.evaluation.results import EvalResult

__all__ = [
    "format_table",
    "plot_pk_vs_judge_calls",
    "results_from_dict",
    "results_to_dict",
    "write_json",
]

_COLUMNS = (
    ("dataset", "{}"),
    ("config", "{}"),
    ("A:Pk", "{:.3f}"),
    ("A:WD", "{:.3f}"),
    ("A:F1", "{:.3f}"),
    ("A:Score", "{:.3f}"),
    ("B:Pk", "{:.3f}"),
    ("B:WD", "{:.3f}"),
    ("B:F1", "{:.3f}"),
    ("ratio", "{:.2f}"),
    ("judge/1k", "{:.1f}"),
    ("embed/1k", "{:.1f}"),
    ("turns", "{:d}"),
    ("dlg", "{:d}"),
    ("sec", "{:.2f}"),
)


def _row(r: EvalResult) -> list[Any]:
    return [
        r.dataset,
        r.name,
        r.pk_a,
        r.wd_a,
        r.f1_a,
        r.score_a,
        r.pk_b,
        r.wd_b,
        r.f1_b,
        r.boundary_ratio,
        r.judge_calls_per_1k_turns,
        r.embed_calls_per_1k_turns,
        r.turns,
        r.dialogues,
        r.seconds,
    ]


def format_table(results: Sequence[EvalResult]) -> str:
    """A fixed-width table, one row per (dataset, configuration); Pk / WD lower is better.

    Columns: protocol A (Pk, WD, per-dialogue F1, Score), protocol B (segeval Pk,
    WD, pooled F1), the boundary ratio, judge and embedding calls per 1,000 turns.
    The older floor-``min_window`` Pk / WD / F1 stay in the JSON.
    """
    rows = [[fmt.format(v) for (_, fmt), v in zip(_COLUMNS, _row(r), strict=True)] for r in results]
    header = [name for name, _ in _COLUMNS]
    widths = [max([len(h)] + [len(row[i]) for row in rows]) for i, h in enumerate(header)]
    lines = [
        "  ".join(
            h.ljust(w) if i < 2 else h.rjust(w)
            for i, (h, w) in enumerate(zip(header, widths, strict=True))
        )
    ]
    lines.append("  ".join("-" * w for w in widths))
    for row in rows:
        lines.append(
            "  ".join(
                c.ljust(w) if i < 2 else c.rjust(w)
                for i, (c, w) in enumerate(zip(row, widths, strict=True))
            )
        )
    return "\n".join(lines)


def results_to_dict(
    results: Sequence[EvalResult], meta: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    """A JSON-ready document: ``{"meta": {...}, "results": [EvalResult fields, ...]}``."""
    floor = int((meta or {}).get("min_window", 1))
    info = {
        "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "python": platform.python_version(),
        "machine": platform.machine(),
        "metric_notes": "pk/window_diff: mean over dialogues, k = round(mean ref segment "
        f"length / 2) per dialogue, >= {floor}; f1: pooled over dialogues. Protocol A "
        "(pk_a, wd_a, f1_a, score_a): SuperDialseg code, k = max(2, round(...)), F1 per "
        "dialogue averaged. Protocol B (pk_b, wd_b, f1_b): segeval default window, "
        "F1 pooled. boundary_ratio: predicted / gold boundaries",
    }
    info.update(meta or {})
    return {"meta": info, "results": [r.to_dict() for r in results]}


def results_from_dict(document: Mapping[str, Any]) -> list[EvalResult]:
    """Read back what :func:`results_to_dict` wrote."""
    return [EvalResult(**row) for row in document["results"]]


def write_json(
    results: Sequence[EvalResult], path: str | Path, *, meta: Mapping[str, Any] | None = None
) -> Path:
    """Write :func:`results_to_dict` to ``path`` (parents created) and return the path."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(results_to_dict(results, meta), indent=2) + "\n", encoding="utf-8")
    return path


def plot_pk_vs_judge_calls(
    results: Sequence[EvalResult],
    path: str | Path,
    *,
    title: str = "Pk vs judge cost (lower-left is better)",
) -> Path:
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
        ax.scatter(
            [r.judge_calls_per_1k_turns for r in rows],
            [r.pk for r in rows],
            label=dataset or "(unnamed)",
            marker=markers[i % len(markers)],
            s=40,
        )
        for r in rows:
            ax.annotate(
                r.name,
                (r.judge_calls_per_1k_turns, r.pk),
                fontsize=7,
                xytext=(4, 3),
                textcoords="offset points",
            )
    top = max([1.0, *(r.judge_calls_per_1k_turns for r in results)])
    ax.set_xlim(-0.05 * top, 1.2 * top)
    ax.set_xlabel("judge calls per 1,000 turns")
    ax.set_ylabel("Pk (lower is better)")
    ax.set_title(title)
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, format="png")
    plt.close(fig)
    return path
