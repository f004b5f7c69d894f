"""Feature groups of the learned model for the ``learned-no-<group>`` evaluation configs.

:data:`ABLATIONS` names, per group, the hand features (and embedding terms)
held at their training mean; :data:`SIGNAL_ABLATIONS` are the signals switched
off instead; :func:`ablated` is a learned policy with a group held.

>>> sorted(ABLATIONS)[:3], SIGNAL_ABLATIONS
(['drift', 'embedding', 'lexical'], ('marker', 'structural', 'window'))
"""

from __future__ import annotations

from collections.abc import Sequence

from episeg.segmentation.learned import LearnedPolicy

__all__ = ["ABLATIONS", "SIGNAL_ABLATIONS", "ablated"]

ABLATIONS: dict[str, tuple[str, ...]] = {
    "semantic": (
        "d_prev1",
        "d_prev2",
        "d_mean2",
        "d_mean4",
        "d_mean8",
        "d_decay",
        "d_cum",
        "d_prev_novel",
        "is_user*d_prev1",
        "is_user*d_prev2",
        "is_user*d_mean4",
        "is_user*d_decay",
        "is_user*d_cum",
        "ep_short*d_prev1",
        "ep_short*d_mean4",
    ),
    "drift": ("ph", "is_user*ph"),
    "lexical": (
        "lex_novel",
        "is_user*lex_novel",
        "shift_cue",
        "log_cw",
        "log_cw_prev",
        "no_cw",
        "is_user*log_cw",
    ),
    "position": ("ep_len_log", "ep_short", "ep_short*d_prev1", "ep_short*d_mean4"),
    "roles": (
        "roles_known",
        "is_user",
        "is_user*d_prev1",
        "is_user*d_prev2",
        "is_user*d_mean4",
        "is_user*d_decay",
        "is_user*d_cum",
        "is_user*lex_novel",
        "is_user*log_cw",
        "is_user*ph",
    ),
    "embedding": ("turn-embedding", "context-shift", "context-agreement"),
}
"""Feature groups of the learned model for the ``learned-no-<group>`` ablations."""
SIGNAL_ABLATIONS = ("marker", "structural", "window")


def ablated(policy: LearnedPolicy, features: Sequence[str]) -> LearnedPolicy:
    """``policy`` with ``features`` held at their training mean, its settings kept."""
    return LearnedPolicy(
        policy.model.without(features),
        threshold=policy.threshold,
        band=policy.band,
        hint_actors=tuple(policy.hint_actors),
        roles_known=policy.roles_known,
        min_turns=policy.min_turns,
    )
