"""Recall's per-tenant index on disk, so a restart does not rebuild it from the store.

:class:`IndexSnapshot` keeps, in one folder per tenant, what
:class:`~episeg.recall.index.TenantIndex` holds: every episode's
:class:`~episeg.recall.index.EpisodeCard` and its turns' BM25 tokens (the
episode-level tokens are the turns' tokens in order, so they are not
stored) and the longest episode span. Two files:

* ``index.json``: the whole index, rewritten atomically (temporary file,
  ``fsync``, rename);
* ``log.jsonl``: one line per write since then (``add``: cards + tokens;
  ``state``: recall state of known episodes), replayed on load.

A write that removes or changes text (``delete``, or an ``add`` that replaces
an episode's tokens) rewrites ``index.json`` and empties the log at once, so
no byte of an erased text stays in either file (``forget``'s byte-level tests
cover it); an empty index leaves no files. The log is also folded in when it
grows past half the snapshot.
:class:`~episeg.recall.persistent_store.PersistentIndexedStore` loads it on
first use when it holds as many episodes as the store and no write that
keeps the count (an update, an edit, a replacing add) was cut short: such a
write marks the folder ``pending`` before it reaches the store and clears the
mark once the snapshot follows. Otherwise (another writer, a crash between the
store write and the log line) it rebuilds from the store and saves;
:class:`PersistentIndex` writes every change through. A torn last log line (a
crash mid-write) is ignored; its episode shows as a count mismatch.

>>> import tempfile
>>> from pathlib import Path
>>> from episeg.recall.index import TenantIndex
>>> from episeg.types import Episode, Turn
>>> index = TenantIndex()
>>> index.add([Episode(id="e1", user="u", session="s", summary="", opened_at=0.0,
...                    closed_at=5.0, turns=(Turn(actor="user", text="deploy v2", ts=0.0),))])
>>> snap = IndexSnapshot(Path(tempfile.mkdtemp()))
>>> snap.save(index)
>>> loaded = snap.load()
>>> list(loaded.cards), loaded.turns.top("deploy", k=1)[0][0]
(['e1'], ('e1', 0))
"""

from __future__ import annotations

import dataclasses
import json
import logging
import os
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from episeg.errors import StoreError
from episeg.recall.index import EpisodeCard, TenantIndex
from episeg.types import Episode

__all__ = ["IndexSnapshot", "PersistentIndex"]

log = logging.getLogger(__name__)

_VERSION = 3  # 2: cards hold summary_words; 3: pinned (an older snapshot is rebuilt)
_FIELDS = [f.name for f in dataclasses.fields(EpisodeCard)]


def _card_row(card: EpisodeCard) -> dict[str, Any]:
    row = {name: getattr(card, name) for name in _FIELDS}
    row["words"] = list(card.words)
    if "metadata" in row:
        row["metadata"] = dict(row["metadata"])
    return row


def _card(row: dict[str, Any]) -> EpisodeCard:
    kwargs = {name: row[name] for name in _FIELDS if name in row}
    kwargs["words"] = tuple(kwargs["words"])
    return EpisodeCard(**kwargs)


class IndexSnapshot:
    """The on-disk copy of one tenant's recall index (see the module docstring)."""

    def __init__(self, folder: Path) -> None:
        self.folder = Path(folder)
        self._main = self.folder / "index.json"
        self._log = self.folder / "log.jsonl"
        self._pending = self.folder / "pending"

    def load(self, into: TenantIndex | None = None) -> TenantIndex | None:
        """The saved index (filled into ``into`` when given), or ``None`` without a usable one."""
        if self._pending.exists():  # a write the count cannot show was cut short
            return None
        try:
            data = json.loads(self._main.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        if not isinstance(data, dict) or data.get("version") != _VERSION:
            return None
        index = TenantIndex() if into is None else into
        try:
            for each in [data, *self._log_lines()]:
                self._apply(index, each)
        except (KeyError, TypeError, ValueError):
            return None
        return index

    def save(self, index: TenantIndex) -> None:
        """Rewrite the whole snapshot (and empty the log); an empty index leaves no files."""
        if not index.cards:
            self.clear()
            return
        data = {"version": _VERSION, "max_span": index.max_span, **_rows(index, index.cards)}
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            tmp = self._main.with_suffix(".tmp")
            with open(tmp, "w", encoding="utf-8") as fh:
                json.dump(data, fh, separators=(",", ":"))
                fh.flush()
                os.fsync(fh.fileno())
            os.replace(tmp, self._main)
            self._log.unlink(missing_ok=True)
            self._pending.unlink(missing_ok=True)
        except OSError as exc:
            raise StoreError(f"cannot write the recall index under {self.folder}: {exc}") from exc

    def log_add(self, index: TenantIndex, ids: Sequence[str]) -> None:
        """Record episodes just added to ``index`` (appends one line; folds a long log)."""
        rows = _rows(index, [i for i in dict.fromkeys(ids) if i in index.cards])
        self._append({"op": "add", "max_span": index.max_span, **rows}, index)

    def log_state(self, index: TenantIndex, ids: Sequence[str]) -> None:
        """Record the recall state (count, access, strength, archived) of these episodes."""
        cards = [_card_row(index.cards[i]) for i in dict.fromkeys(ids) if i in index.cards]
        if cards:
            self._append({"op": "state", "cards": cards}, index)

    def clear(self) -> None:
        """Delete the snapshot and its log."""
        try:
            for path in (self._main, self._log, self._main.with_suffix(".tmp"), self._pending):
                path.unlink(missing_ok=True)
        except OSError as exc:
            raise StoreError(f"cannot delete the recall index under {self.folder}: {exc}") from exc

    @contextmanager
    def writing(self) -> Iterator[None]:
        """Hold the snapshot unusable for a load while a write it must follow runs.

        Left marked if the write raises (the store may hold part of it).
        """
        if self._main.exists():
            try:
                with open(self._pending, "w") as fh:
                    os.fsync(fh.fileno())
            except OSError as exc:
                raise StoreError(f"cannot mark the recall index under {self.folder}") from exc
        yield
        self._pending.unlink(missing_ok=True)

    # -- internals ------------------------------------------------------------------
    def _append(self, line: dict[str, Any], index: TenantIndex) -> None:
        if not self._main.exists():
            self.save(index)
            return
        try:
            with open(self._log, "a", encoding="utf-8") as fh:
                fh.write(json.dumps(line, separators=(",", ":")) + "\n")
                fh.flush()
                os.fsync(fh.fileno())
            folding = self._log.stat().st_size > self._main.stat().st_size // 2
        except OSError as exc:
            raise StoreError(f"cannot write the recall index under {self.folder}: {exc}") from exc
        if folding:
            self.save(index)

    def _log_lines(self) -> list[dict[str, Any]]:
        try:
            text = self._log.read_text(encoding="utf-8")
        except OSError:
            return []
        lines = []
        for raw in text.splitlines():
            try:
                lines.append(json.loads(raw))
            except ValueError:
                break  # a torn last line: the count check catches what it held
        return lines

    @staticmethod
    def _apply(index: TenantIndex, data: dict[str, Any]) -> None:
        cards = [_card(row) for row in data["cards"]]
        if data.get("op") == "state":
            index.cards.update({c.id: c for c in cards if c.id in index.cards})
            return
        index.add_cards(cards, data["tokens"])
        index.max_span = max(index.max_span, float(data.get("max_span", 0.0)))


def _rows(index: TenantIndex, ids: Iterable[str]) -> dict[str, Any]:
    docs = index.turns.documents()
    cards = [index.cards[i] for i in ids]
    tokens = [[docs.get((c.id, pos), []) for pos in range(c.n_turns)] for c in cards]
    return {"cards": [_card_row(c) for c in cards], "tokens": tokens}


class PersistentIndex(TenantIndex):
    """A :class:`TenantIndex` that writes every change through to an :class:`IndexSnapshot`.

    Adding new episodes appends to the log; replacing an indexed episode or
    removing one rewrites the snapshot at once (no erased text stays on disk).
    A failed write deletes the snapshot instead (logged; the next start
    rebuilds); if even that fails after a removal,
    :class:`~episeg.errors.StoreError` is raised, so an erasure is never
    reported done while its text may remain on disk.
    """

    def __init__(self, snapshot: IndexSnapshot) -> None:
        super().__init__()
        self.snapshot = snapshot
        self.quiet = False  # while filling from the store or the disk

    def add(self, episodes: Sequence[Episode]) -> None:
        replaced = any(ep.id in self.cards for ep in episodes)
        quiet, self.quiet = self.quiet, True  # its inner remove() of replaced ids writes nothing
        try:
            super().add(episodes)
        finally:
            self.quiet = quiet
        if quiet:
            return
        try:
            if replaced:
                self.snapshot.save(self)
            else:
                self.snapshot.log_add(self, [ep.id for ep in episodes])
        except StoreError as exc:
            self._drop_snapshot(exc)

    def revise_cards(self, episodes: Sequence[Episode]) -> None:
        super().revise_cards(episodes)
        if not self.quiet:
            try:
                self.snapshot.save(self)
            except StoreError as exc:
                self._drop_snapshot(exc)

    def remove(self, ids: Sequence[str]) -> None:
        before = len(self.cards)
        super().remove(ids)
        if not self.quiet and len(self.cards) != before:
            try:
                self.snapshot.save(self)
            except StoreError as exc:
                self._drop_snapshot(exc, erasing=True)

    def update_state(self, episodes: Sequence[Episode]) -> None:
        super().update_state(episodes)
        if not self.quiet:
            try:
                self.snapshot.log_state(self, [ep.id for ep in episodes])
            except StoreError as exc:
                self._drop_snapshot(exc)

    def _drop_snapshot(self, exc: StoreError, *, erasing: bool = False) -> None:
        # The saved index is only a start-up cache: delete it rather than leave a stale one
        # (or one holding erased text); the next start rebuilds from the store.
        log.warning("recall index not saved (%s); deleted, the next start rebuilds it", exc)
        try:
            self.snapshot.clear()
        except StoreError:
            if erasing:
                raise
            log.error("cannot delete the stale recall index under %s", self.snapshot.folder)
