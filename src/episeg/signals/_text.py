"""Tiny text helpers for signals: how much content a turn carries.

>>> content_words("Where do I check that?")
['check']
>>> len(content_words("Different question: how do I bump the prod deploy version?"))
6
"""

from __future__ import annotations

import re

__all__ = ["STOPWORDS", "content_words"]

_WORD = re.compile(r"[a-z0-9][a-z0-9_'.-]*[a-z0-9]|[a-z0-9]", re.IGNORECASE)

STOPWORDS = frozenset("""
a about above after again all also am an and any are as at be because been before being
below between both but by can could did do does doing done down during each few for from
further get got had has have having he her here hers him his how i if in into is it its
itself just let me more most my no nor not now of off ok okay on once only or other our
out over own please same she should so some such than thank thanks that the their them
then there these they this those through to too under until up very want was we were what
when where which while who whom why will with would yeah yep yes you your yours sure right
well oh hi hello great good fine cool see like one
""".split())  # noqa: SIM905


def content_words(text: str) -> list[str]:
    """Lower-cased words of ``text`` that are not stopwords and not single letters."""
    return [w for w in (m.group(0).lower() for m in _WORD.finditer(text))
            if len(w) > 1 and w not in STOPWORDS]
