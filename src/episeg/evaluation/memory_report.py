"""The memory evaluation's result as markdown tables (``episeg eval memory``).

>>> _with_ci({"recall@200w": 0.5, "recall@200w_ci": [0.4, 0.6]}, 200), _fmt(None)
('0.500 [0.400, 0.600]', 'n/a')
"""

from __future__ import annotations

import math
from typing import Any

from episeg.evaluation.memory_scores import RECALL_AT

__all__ = ["format_markdown"]


def format_markdown(result: dict[str, Any]) -> str:
    """The result as markdown tables (methods x budgets with 95% intervals, ablation)."""
    budgets = result["budgets"]
    head = "| method | " + " | ".join(f"{b} words" for b in budgets)
    head += " | " + " | ".join(f"all found @{b}" for b in budgets)
    head += " | " + " | ".join(f"recall@{k}" for k in RECALL_AT) + " |"
    lines = [head, "|" + "---|" * (1 + 2 * len(budgets) + len(RECALL_AT))]
    for m in result["methods"]:
        cells = [_with_ci(m, b) for b in budgets]
        cells += [f"{m[f'all_found@{b}w']:.3f}" for b in budgets]
        cells += [f"{m.get(f'recall@{k}', math.nan):.3f}" for k in RECALL_AT]
        name = f"**{m['name']}**" if m["name"].startswith("episeg") else m["name"]
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    lines.append("")
    lines.append("Words returned (mean) and evidence recall per category:")
    lines.append("")
    cats = list(result["methods"][0][f"by_category@{budgets[0]}w"]) if result["methods"] else []
    lines.append(
        "| method | "
        + " | ".join(f"words @{b}" for b in budgets)
        + " | "
        + " | ".join(f"{c} @{budgets[1] if len(budgets) > 1 else budgets[0]}" for c in cats)
        + " |"
    )
    lines.append("|" + "---|" * (1 + len(budgets) + len(cats)))
    mid = budgets[1] if len(budgets) > 1 else budgets[0]
    for m in result["methods"]:
        cells = [f"{m[f'words@{b}w']:.0f}" for b in budgets]
        cells += [f"{m[f'by_category@{mid}w'][c]:.3f}" for c in cats]
        lines.append(f"| {m['name']} | " + " | ".join(cells) + " |")
    if result["ablation"]:
        lines += [
            "",
            "Ablation (the same recall with a rerank term added at the weight shown):",
            "",
        ]
        lines.append("| variant | " + " | ".join(f"{b} words" for b in budgets) + " |")
        lines.append("|" + "---|" * (1 + len(budgets)))
        for a in result["ablation"]:
            cells = [_with_ci(a, b) for b in budgets]
            lines.append(f"| {a['name']} | " + " | ".join(cells) + " |")
    lat = result["recall_latency_ms"]
    lines += [
        "",
        f"Recall latency ({lat['calls']} calls, {lat['what']}): "
        f"p50 {lat['p50']:.1f} ms, p99 {lat['p99']:.1f} ms.",
    ]
    sal = result["salience"]
    if sal:
        lines.append(
            f"Salience AUC for 'episode holds evidence' ({sal['episodes']} episodes, "
            f"{sal['with_evidence']} with evidence): raw {_fmt(sal['auc_salience'])}, "
            f"turn count alone {_fmt(sal['auc_turn_count'])}, within length bins "
            f"{_fmt(sal['auc_salience_within_length_bins'])}."
        )
    d = result["evidence_defects"]
    lines.append(
        f"Evidence ids: {d['ids']} read, {d['normalised']} normalised, "
        f"{d['dropped_malformed']} unreadable and {d['dropped_outside_conversation']} "
        f"outside their conversation dropped; {d['questions_without_evidence']} questions "
        "left without evidence skipped."
    )
    return "\n".join(lines) + "\n"


def _with_ci(row: dict[str, Any], budget: int) -> str:
    lo, hi = row[f"recall@{budget}w_ci"]
    return f"{row[f'recall@{budget}w']:.3f} [{lo:.3f}, {hi:.3f}]"


def _fmt(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.3f}"
