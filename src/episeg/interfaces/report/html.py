"""HTML for :mod:`episeg.interfaces.report`: one self-contained page, every string escaped.

The page has no external resource: inline CSS, inline SVG per session (episode
bands, boundary lines, the semantic-distance polyline and the threshold
line) and a short inline script that only links bands to episode cards on
hover; it never reads turn text. Turn text reaches the page only through
:func:`html.escape`.

>>> _esc('<script>alert("x")</script>')
'&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;'
>>> colour(0), colour(1)
('hsl(210, 70%, 55%)', 'hsl(347, 70%, 55%)')
>>> from episeg.testing import HashingEmbedder
>>> from episeg.types import Turn
>>> page = render_report([Turn(actor="user", text="auth 401 <script>x()</script>", ts=0.0)],
...                      embedder=HashingEmbedder())
>>> "<script>x()" in page, "&lt;script&gt;x()" in page
(False, True)
"""

from __future__ import annotations

import base64
import hashlib
import html
from collections.abc import Sequence
from pathlib import Path

from episeg.config import EpisegConfig
from episeg.interfaces.report.timeline import (
    EpisodeBand,
    SessionTimeline,
    TurnRow,
    build_timelines,
)
from episeg.interfaces.views import salience_text
from episeg.types import Turn
from episeg.typing import Embedder

__all__ = ["colour", "render_page", "render_report", "write_report"]

_W, _H, _PAD = 1000.0, 180.0, 24.0

_CSS = """
body{font:14px/1.45 system-ui,sans-serif;margin:24px;color:#1d2330;background:#fafbfc}
h1{font-size:22px;margin:0 0 4px} h2{font-size:17px;margin:28px 0 8px}
.meta{color:#5b6475;margin-bottom:12px}
svg.chart{width:100%;height:auto;background:#fff;border:1px solid #d8dde6;border-radius:6px}
.chart text{font-size:11px;fill:#5b6475}
.band.hot{opacity:.55}
.episode{background:#fff;border:1px solid #d8dde6;border-left:8px solid;border-radius:6px;
 margin:10px 0;padding:8px 12px}
.episode.sub{margin-left:36px;border-left-style:double}
.episode.hot{box-shadow:0 0 0 2px #1d2330}
.episode header{font-weight:600;display:flex;gap:14px;flex-wrap:wrap}
.badge{font-size:12px;font-weight:500;padding:1px 7px;border-radius:10px;background:#eef1f6}
.salience{background:#fff3d6}.subbadge{background:#e5dcff}
.summary{color:#5b6475;margin:2px 0 6px}
.turn{display:grid;grid-template-columns:90px 1fr 70px;gap:8px;padding:3px 0;
 border-top:1px dashed #eceff4}
.actor{font-weight:600;color:#5b6475}.dist{color:#8a93a5;font-variant-numeric:tabular-nums}
.text{margin:0;white-space:pre-wrap;word-break:break-word}
.boundary{grid-column:1/-1;background:#fdecec;border-radius:4px;padding:3px 8px;
 font-size:12px;color:#8c1d1d}
"""

_JS = """
document.body.dataset.scriptsRan = "1";
document.querySelectorAll("[data-band]").forEach(function (el) {
  var key = el.getAttribute("data-band");
  el.addEventListener("mouseenter", function () {
    document.querySelectorAll('[data-band="' + key + '"]').forEach(function (o) {
      o.classList.add("hot"); });
  });
  el.addEventListener("mouseleave", function () {
    document.querySelectorAll('[data-band="' + key + '"]').forEach(function (o) {
      o.classList.remove("hot"); });
  });
});
"""

# Only this exact script may run (CSP hash): defence in depth behind the escaping.
_JS_HASH = base64.b64encode(hashlib.sha256(_JS.encode()).digest()).decode()


def _esc(value: object) -> str:
    return html.escape(str(value), quote=True)


def _n(count: int, noun: str) -> str:
    return f"{count} {noun}{'' if count == 1 else 's'}"


def colour(index: int) -> str:
    """A distinct colour per episode (golden-angle hue steps)."""
    return f"hsl({(210 + index * 137) % 360}, 70%, 55%)"


def _chart(tl: SessionTimeline, key: str) -> str:
    n = max(len(tl.rows), 1)
    step = (_W - 2 * _PAD) / n
    distances = [r.distance for r in tl.rows if r.distance is not None]
    top = max([tl.threshold * 1.25, 1.0, *distances])

    def y(value: float) -> float:
        return _H - _PAD - (value / top) * (_H - 2 * _PAD)

    parts = [
        f'<svg class="chart" viewBox="0 0 {_W:.0f} {_H:.0f}" role="img" '
        f'aria-label="episode bands and semantic distance">'
    ]
    for band in tl.bands:
        x = _PAD + band.first * step
        width = (band.last - band.first + 1) * step
        inset = 14.0 if band.is_sub_episode else 0.0
        parts.append(
            f'<rect class="band" data-band="{key}-{band.index}" x="{x:.1f}" '
            f'y="{_PAD + inset:.1f}" width="{width:.1f}" '
            f'height="{_H - 2 * _PAD - inset:.1f}" fill="{colour(band.index)}" '
            f'opacity="0.25"><title>episode {band.index + 1}: turns {band.first}-'
            f"{band.last}, salience {_esc(salience_text(band.episode.salience))}"
            f"</title></rect>"
        )
    for row in tl.rows:
        if row.opens_episode:
            x = _PAD + row.position * step
            why = ", ".join(v.signal for v in row.fired) or "combined evidence"
            parts.append(
                f'<line class="boundary-line" x1="{x:.1f}" x2="{x:.1f}" y1="{_PAD}" '
                f'y2="{_H - _PAD}" stroke="#8c1d1d" stroke-width="1.5">'
                f"<title>{_esc(row.decision.value)} before turn {row.position}: "
                f"{_esc(why)}</title></line>"
            )
    ty = y(tl.threshold)
    parts.append(
        f'<line class="threshold" x1="{_PAD}" x2="{_W - _PAD}" y1="{ty:.1f}" '
        f'y2="{ty:.1f}" stroke="#d14" stroke-dasharray="6 4"/>'
        f'<text x="{_W - _PAD}" y="{ty - 4:.1f}" text-anchor="end">semantic threshold '
        f"{tl.threshold:.2f}</text>"
    )
    runs: list[list[str]] = [[]]
    for row in tl.rows:
        if row.distance is None:
            runs.append([])
        else:
            runs[-1].append(f"{_PAD + (row.position + 0.5) * step:.1f},{y(row.distance):.1f}")
    for run in (r for r in runs if r):
        parts.append(
            f'<polyline class="distance" points="{" ".join(run)}" fill="none" '
            f'stroke="#1d2330" stroke-width="1.8"/>'
        )
        parts.extend(
            f'<circle cx="{p.split(",")[0]}" cy="{p.split(",")[1]}" r="2.5" fill="#1d2330"/>'
            for p in run
        )
    parts.append(
        f'<text x="{_PAD}" y="{_H - 6}">turn 0</text><text x="{_W - _PAD}" '
        f'y="{_H - 6}" text-anchor="end">turn {n - 1}</text>'
        f'<text x="{_PAD}" y="14">cosine distance to the episode (max {top:.2f})</text>'
    )
    parts.append("</svg>")
    return "".join(parts)


def _turn(row: TurnRow) -> str:
    dist = "" if row.distance is None else f"{row.distance:.3f}"
    boundary = ""
    if row.opens_episode:
        fired = "; ".join(f"{v.signal} ({v.reason})" for v in row.fired) or "combined evidence"
        boundary = (
            f'<div class="boundary" data-decision="{_esc(row.decision.value)}">'
            f"{_esc(row.decision.value)}: {_esc(fired)}</div>"
        )
    return (
        f'<div class="turn" data-position="{row.position}">{boundary}'
        f'<span class="actor">{row.position}. {_esc(row.turn.actor.value)}</span>'
        f'<p class="text">{_esc(row.turn.text)}</p><span class="dist" '
        f'title="semantic distance">{dist}</span></div>'
    )


def _episode(band: EpisodeBand, rows: Sequence[TurnRow], key: str) -> str:
    ep = band.episode
    sub = ' <span class="badge subbadge">sub-episode</span>' if band.is_sub_episode else ""
    turns = "".join(_turn(r) for r in rows[band.first : band.last + 1])
    return (
        f'<article class="episode{" sub" if band.is_sub_episode else ""}" '
        f'data-band="{key}-{band.index}" data-episode-index="{band.index}" '
        f'data-turn-count="{len(ep.turns)}" data-sub="{int(band.is_sub_episode)}" '
        f'style="border-left-color:{colour(band.index)}"><header>'
        f"<span>Episode {band.index + 1}</span>{sub}"
        f'<span class="badge">turns {band.first}-{band.last} ({len(ep.turns)})</span>'
        f'<span class="badge salience">salience {_esc(salience_text(ep.salience))}</span>'
        f'</header><p class="summary">{_esc(ep.summary)}</p>{turns}</article>'
    )


def render_page(timelines: Sequence[SessionTimeline], *, title: str) -> str:
    """The complete HTML document for ``timelines``."""
    total_turns = sum(len(t.rows) for t in timelines)
    total_eps = sum(len(t.bands) for t in timelines)
    body = []
    for number, tl in enumerate(timelines):
        key = f"s{number}"
        body.append(
            f'<section class="session" data-user="{_esc(tl.user)}" '
            f'data-session="{_esc(tl.session)}"><h2>user {_esc(tl.user)} · session '
            f"{_esc(tl.session)} · {_n(len(tl.rows), 'turn')} · "
            f"{_n(len(tl.bands), 'episode')}</h2>"
            f"{_chart(tl, key)}"
            + "".join(_episode(b, tl.rows, key) for b in tl.bands)
            + "</section>"
        )
    return (
        f'<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="default-src \'none\'; '
        f"style-src 'unsafe-inline'; script-src 'sha256-{_JS_HASH}'; img-src data:\">"
        f"<title>{_esc(title)}</title><style>{_CSS}</style></head><body>"
        f'<h1>{_esc(title)}</h1><p class="meta">{_n(total_turns, "turn")} · '
        f"{_n(total_eps, 'episode')} "
        f"in {len(timelines)} session(s). Bands: one colour per episode (inset: "
        f"sub-episode). Red lines: boundaries. Curve: semantic distance of each turn to "
        f"its episode; dashed: threshold.</p>{''.join(body)}"
        f"<script>{_JS}</script></body></html>"
    )


def render_report(
    turns: Sequence[Turn],
    *,
    title: str | None = None,
    embedder: Embedder | None = None,
    config: EpisegConfig | None = None,
) -> str:
    """The whole HTML page for ``turns``."""
    timelines = build_timelines(turns, embedder=embedder, config=config)
    return render_page(timelines, title=title or "episeg segmentation report")


def write_report(
    turns: Sequence[Turn],
    output: str | Path,
    *,
    title: str | None = None,
    embedder: Embedder | None = None,
    config: EpisegConfig | None = None,
) -> dict[str, int]:
    """Render and write the report; returns counts of turns, episodes and sessions."""
    timelines = build_timelines(turns, embedder=embedder, config=config)
    page = render_page(timelines, title=title or "episeg segmentation report")
    Path(output).write_text(page, encoding="utf-8")
    return {
        "turns": sum(len(t.rows) for t in timelines),
        "episodes": sum(len(t.bands) for t in timelines),
        "sessions": len(timelines),
    }
