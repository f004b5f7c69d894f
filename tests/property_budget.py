"""How many examples a property test runs: all in the whole suite, fewer in the fast tier.

``./run.sh test`` (CI) runs every property test with its full ``max_examples``;
``./run.sh test-fast`` (``-m "not slow"``) runs a fifth of it (at least 10), and
Hypothesis tests without their own count run the ``fast`` profile's 20 instead of
100. ``tests/conftest.py`` switches the fast tier on from the ``-m`` expression
before any test module is imported, so the decorators below read the right count.

>>> fast_count(300), fast_count(40)
(60, 10)
>>> examples(300) == (fast_count(300) if FAST_TIER else 300)
True
"""

from __future__ import annotations

__all__ = ["FAST_PROFILE_EXAMPLES", "FAST_TIER", "examples", "use_fast_tier"]

FAST_TIER = False
FAST_PROFILE_EXAMPLES = 20
_FAST_SHARE = 5
_FAST_FLOOR = 10


def fast_count(full: int) -> int:
    """The fast tier's share of ``full`` examples: a fifth, at least 10."""
    return max(_FAST_FLOOR, full // _FAST_SHARE)


def examples(full: int) -> int:
    """``full`` in the whole suite; :func:`fast_count` of it in the fast tier."""
    return fast_count(full) if FAST_TIER else full


def use_fast_tier() -> None:
    """Called by ``tests/conftest.py`` when the run deselects ``slow`` tests."""
    global FAST_TIER
    FAST_TIER = True
