"""F126: recall's neighbour lists leave out archived episodes, which maintenance hid from recall."""

from __future__ import annotations

import dataclasses

from episeg.recall.tenant_index import TenantIndex
from episeg.testing import HashingEmbedder
from tests.recall.helpers import embedded_episode

EMB = HashingEmbedder(dim=64)


def test_an_archived_episode_is_no_neighbour_and_comes_back_when_unarchived() -> None:
    episodes = [embedded_episode(f"e{i}", [f"turn {i}"], 1e9 + 100 * i, EMB) for i in range(3)]
    index = TenantIndex()
    index.add(episodes)
    assert index.neighbours("e1", 1) == (["e0"], ["e2"])
    index.update_state([dataclasses.replace(episodes[0], archived=True)])
    assert index.neighbours("e1", 1) == ([], ["e2"])
    assert index.neighbours("e0", 1) == ([], [])  # an archived hit lists none either
    index.update_state([dataclasses.replace(episodes[0], archived=False)])
    assert index.neighbours("e1", 1) == (["e0"], ["e2"])
