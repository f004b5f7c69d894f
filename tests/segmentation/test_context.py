"""EpisodeContext's running sums against the features computed afresh from their definitions."""

from __future__ import annotations

import math

import numpy as np
import pytest

from episeg.segmentation.context import EpisodeContext, TurnView
from episeg.segmentation.features import boundary_features, feature_names

_TEXTS = ("deploy the api", "bake bread tonight", "by the way, the cache", "", "retry the logging")


def _cos_distance(a: np.ndarray, b: np.ndarray) -> float:
    norm = math.sqrt(float(a @ a) * float(b @ b))
    return 1.0 - float(a @ b) / norm if norm > 0.0 else 1.0


def _reference(episode: list[np.ndarray], e: np.ndarray) -> dict[str, float]:
    """The distance features of ``e`` after ``episode``, straight from the module docstring."""
    tail = episode[-8:]

    def last(w: int) -> np.ndarray:
        mean: np.ndarray = np.mean(tail[-min(w, len(tail)) :], axis=0)
        return mean

    decayed = episode[0].copy()
    for v in episode[1:]:
        decayed = 0.6 * decayed + 0.4 * v
    cum_distances = [
        _cos_distance(v, np.mean(episode[:i], axis=0)) for i, v in enumerate(episode) if i >= 2
    ]
    d_cum = _cos_distance(e, np.mean(episode, axis=0))
    ph = 0.0
    if len(episode) >= 2:  # Page-Hinkley over the distances to the cumulative mean, e included
        total, low, avg = 0.0, 0.0, 0.0
        for n, d in enumerate([*cum_distances, d_cum], start=1):
            avg += (d - avg) / n
            total += d - avg - 0.05
            low = min(low, total)
        ph = total - low
    novel = 0.0
    if len(tail) >= 2:
        before = tail[-min(5, len(tail)) : -1]
        novel = _cos_distance(tail[-1], np.mean(before, axis=0))
    return {
        "d_prev1": _cos_distance(e, tail[-1]),
        "d_prev2": _cos_distance(e, tail[-2] if len(tail) >= 2 else tail[-1]),
        "d_mean2": _cos_distance(e, last(2)),
        "d_mean4": _cos_distance(e, last(4)),
        "d_mean8": _cos_distance(e, last(8)),
        "d_decay": _cos_distance(e, decayed),
        "d_cum": d_cum,
        "ph": ph,
        "d_prev_novel": novel,
    }


@pytest.mark.parametrize("dim", [3, 16, 384])
def test_running_sums_match_the_features_computed_afresh(dim: int) -> None:
    rng = np.random.default_rng(dim)
    names = feature_names(0)
    for _ in range(20):
        vectors = [rng.normal(size=dim) for _ in range(30)]
        vectors[7] = np.zeros(dim)  # a zero vector is 1.0 away from everything
        if rng.random() < 0.3:  # near-duplicates: cosine distances close to 0
            vectors = [vectors[0] + 1e-7 * rng.normal(size=dim) for _ in vectors]
        views = [TurnView.make(v, "user", None, _TEXTS[i % 5]) for i, v in enumerate(vectors)]
        context, episode = EpisodeContext(), [vectors[0]]
        context.commit(views[0])
        for t in range(1, len(views)):
            x, e, _, b = boundary_features(context, [views[t]], lookahead=0, roles_known=True)
            want = _reference(episode, vectors[t])
            got = {name: float(x[names.index(name)]) for name in want}
            assert got == pytest.approx(want, abs=1e-9), (t, len(episode))
            np.testing.assert_allclose(b, np.mean(episode[-8:][-4:], axis=0), atol=1e-12)
            assert np.array_equal(e, views[t].vec)
            if rng.random() < 0.2:  # a boundary: the next episode starts fresh
                context, episode = EpisodeContext(), []
            context.commit(views[t])
            episode.append(vectors[t])
            np.testing.assert_allclose(context.mean, np.mean(episode, axis=0), atol=1e-12)


def test_the_means_it_hands_out_are_copies() -> None:
    context = EpisodeContext()
    context.commit(TurnView.make(np.array([1.0, 0.0]), "user", None, "deploy"))
    context.mean[0] = 9.0
    context.decayed[0] = 9.0
    assert context.mean.tolist() == context.decayed.tolist() == [1.0, 0.0]


def test_an_empty_context_refuses_to_be_measured() -> None:
    with pytest.raises(ValueError, match="empty episode context"):
        EpisodeContext().mean  # noqa: B018
    with pytest.raises(ValueError, match="non-empty"):
        boundary_features(
            EpisodeContext(),
            [TurnView.make(np.ones(2), "user", None, "x")],
            lookahead=0,
            roles_known=True,
        )
