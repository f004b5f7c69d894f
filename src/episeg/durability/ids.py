"""Episode ids that stay unique across every process sharing one store.

The segmenter names an episode by its tenant, session and first turn id
(:func:`episeg.segmentation.episode.episode_id`): deterministic, so a retried
write is an upsert, but two processes with separate journals writing to one
``chroma run`` server give two different episodes the same id when their
sessions and turn ids coincide (issue 12, F3). Each journal therefore holds a
random *node id*, made when the journal file is created and kept in it
(:attr:`Journal.node <episeg.durability.journal.Journal>`), and
:func:`globalise` folds it into every id the segmenter makes. Ids stay
deterministic per journal (a replay after ``kill -9`` rebuilds the same id),
and a journal made before node ids existed has node ``""`` and keeps its ids.

>>> from episeg.types import Episode
>>> ep = Episode(id="a" * 32, user="u", session="s", turns=(), summary="",
...              opened_at=0.0, closed_at=0.0)
>>> globalise("", ep).id == ep.id          # a journal from before node ids
True
>>> one, two = globalise("node-one", ep), globalise("node-two", ep)
>>> one.id != two.id, one.id == globalise("node-one", ep).id, len(one.id)
(True, True, 32)
"""

from __future__ import annotations

import dataclasses
import hashlib

from episeg.types import Episode

__all__ = ["global_id", "globalise"]


def global_id(node: str, local_id: str) -> str:
    """``local_id`` with ``node`` folded in (unchanged when ``node`` is empty)."""
    if not node:
        return local_id
    return hashlib.sha256(f"{node}\x1f{local_id}".encode()).hexdigest()[:32]


def globalise(node: str, episode: Episode) -> Episode:
    """``episode`` with its id and its parent's id made unique to ``node``."""
    if not node:
        return episode
    parent = None if episode.parent_id is None else global_id(node, episode.parent_id)
    return dataclasses.replace(episode, id=global_id(node, episode.id), parent_id=parent)
