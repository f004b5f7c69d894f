"""Cheap textual evidence shared by the signals, the offline scorer and the local judge.

Turn types are used when the harness supplied them; otherwise a small,
documented heuristic reads the text. Content words are lower-cased word
tokens of 3+ characters that are not English stopwords.

>>> from episeg.text import content_words, is_tool_error, is_user_correction
>>> from episeg.types import Turn
>>> content_words("Why is the auth service returning 401 again?")
['auth', 'service', 'returning', '401']
>>> is_tool_error(Turn(actor="tool", text="Traceback (most recent call last): ...", ts=0))
True
>>> is_user_correction(Turn(actor="user", text="No, that's wrong: use port 8443", ts=0))
True
"""

from __future__ import annotations

import re
import unicodedata
from functools import cache

from episeg.types import Actor, Turn, TurnType

__all__ = [
    "STOPWORDS",
    "content_words",
    "content_words_any_script",
    "is_tool_error",
    "is_user_correction",
]

_STOPWORD_TEXT = """
a about above after again against all also am an and any are aren as at be because been before
being below between both but by can cannot could couldn did didn do does doesn doing don down
during each few for from further get got had hadn has hasn have haven having he her here hers
herself him himself his how i if in into is isn it its itself just let like ll me might more most
much must mustn my myself need no nor not now of off on once only or other ought our ours
ourselves out over own please re really same shall she should shouldn so some still such than
that the their theirs them themselves then there these they this those through thanks thank to
too under until up us ve very was wasn we were weren what when where which while who whom why
will with won would wouldn yes yet you your yours yourself yourselves okay ok sure hi hello hey
one two well going want know think see make use used using way lot thing things whether
maybe perhaps either neither every via per
"""
STOPWORDS = frozenset(_STOPWORD_TEXT.split())

_WORD = re.compile(r"[a-z0-9][a-z0-9_\-']*[a-z0-9]|[a-z0-9]")
_TOOL_ERROR = re.compile(
    r"\b(traceback|exception|error|errno|failed|failure|fatal|panic|segfault|denied|refused|"
    r"timed? ?out|not found|exit (?:code|status) [1-9]\d*|"
    r"[45]\d\d (?:bad|unauthori[sz]ed|forbidden|not found|internal))\b",
    re.IGNORECASE,
)
_CORRECTION = re.compile(
    r"^\s*(no\b|nope\b|wrong\b|that'?s (?:not|wrong|incorrect)|that is (?:not|wrong|incorrect)|"
    r"actually\b|not quite\b|not what\b|incorrect\b|wait\b|i meant\b|instead\b|correction\b|"
    r"you (?:misunderstood|got it wrong))",
    re.IGNORECASE,
)


def content_words(text: str) -> list[str]:
    """Lower-cased content words in order (stopwords and 1-2 letter words dropped)."""
    # _WORD's matches start and end with a letter or digit: nothing to strip off them.
    return [w for w in _WORD.findall(text.lower()) if len(w) >= 3 and w not in STOPWORDS]


def is_tool_error(turn: Turn) -> bool:
    """``type == tool-error``; untyped: a tool turn whose text reads like a failure."""
    if turn.type is not None:
        return turn.type is TurnType.TOOL_ERROR
    return turn.actor is Actor.TOOL and bool(_TOOL_ERROR.search(turn.text[:2000]))


def is_user_correction(turn: Turn) -> bool:
    """``type == user-correction``; untyped: a user turn opening with "no", "actually", ..."""
    if turn.type is not None:
        return turn.type is TurnType.USER_CORRECTION
    return turn.actor is Actor.USER and bool(_CORRECTION.search(turn.text))


# Scripts written without spaces between words (Thai, Lao, Myanmar, Khmer, kana,
# Han) and Hangul: a run of them is read as its overlapping character pairs.
_PAIRED = (
    "\u0e00-\u0eff\u1000-\u109f\u1100-\u11ff\u1780-\u17ff\u3005\u3040-\u30ff"
    "\u3130-\u318f\u31f0-\u31ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff"
    "\U00020000-\U0003134f"
)
_ALNUM = rf"[^\W_{_PAIRED}]"  # a letter or digit of any other script
_ANY_WORD = re.compile(rf"([{_PAIRED}]+)|{_ALNUM}(?:[^\W{_PAIRED}]|[\-'])*{_ALNUM}|{_ALNUM}")


@cache
def _drop_marks() -> dict[int, None]:
    """A ``str.translate`` table deleting combining marks (built once, on first use)."""
    planes = range(0x300, 0x20000)  # the first two planes: every script's marks but rare ones
    return {c: None for c in planes if unicodedata.category(chr(c)).startswith("M")}


def content_words_any_script(text: str) -> list[str]:
    """:func:`content_words`, for text in any script (the local judge reads these).

    ASCII text gives exactly :func:`content_words`. Other text is NFKC-normalised
    and lower-cased, and its combining marks dropped (an accent is composed
    into its letter first, so "épinards" stays whole); words are runs of
    letters and digits of any script, 3+ characters, not English stopwords.
    In Chinese, Japanese, Korean, Thai, Lao, Khmer and Myanmar text, where
    words are not spaced, each run yields its overlapping character pairs (a
    lone character, itself). :func:`content_words` itself is unchanged: the
    segmenter's features (and the shipped boundary model) read it.

    >>> content_words_any_script("Why is the auth service returning 401 again?")
    ['auth', 'service', 'returning', '401']
    >>> content_words_any_script("Recette de lasagnes aux épinards")
    ['recette', 'lasagnes', 'aux', 'épinards']
    >>> content_words_any_script("посоветуйте рецепт лазаньи")
    ['посоветуйте', 'рецепт', 'лазаньи']
    >>> content_words_any_script("推荐食谱, 猫")
    ['推荐', '荐食', '食谱', '猫']
    """
    if text.isascii():
        return content_words(text)
    folded = unicodedata.normalize("NFKC", text).lower().translate(_drop_marks())
    words: list[str] = []
    for match in _ANY_WORD.finditer(folded):
        run = match.group(1)
        if run is not None:
            words += [run[i : i + 2] for i in range(len(run) - 1)] or [run]
        elif len(match.group()) >= 3 and match.group() not in STOPWORDS:
            words.append(match.group())
    return words
