"""``episeg report``: a self-contained HTML timeline of how a transcript was segmented.

:mod:`~episeg.interfaces.report.timeline` builds the data (per-session rows and
episode bands, straight from the segmenter's trace); :mod:`~episeg.interfaces.report.html`
renders it as one page.
"""

from episeg.interfaces.report.html import colour, render_page, render_report, write_report
from episeg.interfaces.report.timeline import (
    EpisodeBand,
    SessionTimeline,
    TurnRow,
    build_timelines,
)

__all__ = [
    "EpisodeBand",
    "SessionTimeline",
    "TurnRow",
    "build_timelines",
    "colour",
    "render_page",
    "render_report",
    "write_report",
]
