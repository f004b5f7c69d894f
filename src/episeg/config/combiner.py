"""The ``combiner`` configuration section: which combiner decides boundaries.

Fields that only the learned combiner reads are refused next to
``kind="layered"``, which would ignore them:

>>> CombinerConfig(kind="layered", threshold=1.0)
Traceback (most recent call last):
...
episeg.errors.ConfigError: combiner.kind 'layered' would ignore combiner.threshold (read by ...
>>> CombinerConfig(kind="layered", roles_known=False).learned_only()  # allowed, see the class
('roles_known',)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from episeg.config.base import _fail, _int, _num, _Section
from episeg.errors import ConfigError

__all__ = ["CombinerConfig"]

_COMBINERS = ("auto", "learned", "layered")


@dataclass(frozen=True, kw_only=True)
class CombinerConfig(_Section):
    """Which combiner decides boundaries (:class:`~episeg.segmentation.learned.LearnedPolicy`).

    kind : str, default "auto"
        ``learned``: the boundary model trained by ``episeg train segmenter``
        decides after the authoritative rulings (marker, system-event, window);
        it needs the embedder it was trained on (all-MiniLM-L6-v2, 384 dims).
        ``layered``: the hand-set :class:`~episeg.segmentation.policy.BoundaryPolicy`
        (``policy`` section), kept for comparison. ``auto``: ``learned`` when
        the segmenter's embedder is the model's, else ``layered`` (a test
        double such as the hashing embedder), logged once.
    weights : str or None, default None
        A weights file written by the trainer; ``None``: the shipped agent
        model; ``"chat"``: the shipped open-domain chat model.
    threshold : float or None, default None
        Decision threshold on the model's logit (``None``: the model's own).
    band : float or None, default None
        Half-width of the uncertain band around the threshold where a
        configured judge is asked (``None``: the model's own).
    min_turns : int or None, default None
        Segment-length prior: the model cuts only an episode holding this many
        turns (``None``: the model's own; 2 for the agent model).
    roles_known : bool, default True
        ``False`` when speaker labels carry no meaning: the model's role
        features are then off (set ``policy.hint_actors`` to all four too), and
        the agent weights' roles-unknown model scores, which reads one later
        turn: each turn is decided when the next arrives (or at ``flush``), so an
        episode closes one turn after its last (``Segmenter.lookahead``).

    ``weights``, ``threshold``, ``band`` and ``min_turns`` configure the
    learned combiner only, so with ``kind="layered"`` they are refused.
    ``roles_known=False`` is not (the evaluation's layered configurations
    share it with the learned ones): a segmenter that ends up with the layered
    policy (``layered``, or ``auto`` with another embedder) logs a warning
    naming each learned-only setting it ignores (:meth:`learned_only`).
    """

    section: ClassVar[str] = "combiner"
    kind: str = "auto"
    weights: str | None = None
    threshold: float | None = None
    band: float | None = None
    min_turns: int | None = None
    roles_known: bool = True

    def __post_init__(self) -> None:
        if self.kind not in _COMBINERS:
            raise _fail(self.section, "kind", f"one of {', '.join(_COMBINERS)}", self.kind)
        if self.weights is not None and not isinstance(self.weights, str):
            raise _fail(self.section, "weights", "a path or 'chat'", self.weights)
        if self.threshold is not None:
            _num(self.section, "threshold", self.threshold, float("-inf"))
        if self.band is not None:
            _num(self.section, "band", self.band, 0.0)
        if self.min_turns is not None:
            _int(self.section, "min_turns", self.min_turns)
        if not isinstance(self.roles_known, bool):
            raise _fail(self.section, "roles_known", "a bool", self.roles_known)
        refused = [n for n in self.learned_only() if n != "roles_known"]
        if self.kind == "layered" and refused:
            names = ", ".join(f"combiner.{n}" for n in refused)
            raise ConfigError(
                f"combiner.kind 'layered' would ignore {names} (read by the learned "
                "combiner only); leave it unset, or set combiner.kind to 'learned' or 'auto'"
            )

    def learned_only(self) -> tuple[str, ...]:
        """The learned-only fields set away from their defaults (ignored by the layered policy).

        >>> CombinerConfig(threshold=0.5, roles_known=False).learned_only()
        ('threshold', 'roles_known')
        """
        fields = ("weights", "threshold", "band", "min_turns")
        changed = [n for n in fields if getattr(self, n) is not None]
        return (*changed, *(() if self.roles_known else ("roles_known",)))
