"""An OpenAI Agents SDK session backed by episeg (``pip install 'episeg[openai-agents]'``).

:class:`EpisegSession` implements the SDK's ``Session`` protocol
(``get_items`` / ``add_items`` / ``pop_item`` / ``clear_session``):

- the verbatim history the SDK replays is kept by an inner SDK session
  (default an in-memory ``SQLiteSession``; ``history_db="chat.db"`` keeps it in a
  file across restarts, keyed by tenant and session, :func:`history_key`);
- every item is also fed to episeg **as it is added** (user and assistant
  messages, tool calls and their outputs become turns of the tenant ``user``,
  session ``session_id``), so episodes close and are scored and stored while
  the conversation runs;
- :meth:`EpisegSession.input_callback`, passed as
  ``RunConfig(session_input_callback=...)``, recalls the tenant's episodes for
  the new input and puts them before it as one ``developer`` message, which
  is sent to the model but not stored in the history. The current
  conversation's own open turns are left out of it (the model has them in the
  history); other sessions' open turns and every stored episode are recalled.
  ``add_items`` drops only a note this session made (a ``developer`` message
  with the exact text of a note it has not yet dropped), so a user or
  assistant message quoting a note is kept and observed like any other.

An item whose text is longer than the memory's ``max_turn_chars`` (default
100,000 characters, e.g. a tool output of a whole log file) is observed
clipped: its first characters and a marker ``[episeg: item N clipped, T
characters; the first K are kept above]``, with a logged warning. The turn
and the items after it are kept, the loss is visible in the turn itself, and
the history keeps the item whole; the agent's run never fails on it. Every
turn of a batch is made (and clipped) before anything is written; should
episeg still fail to observe one (its journal or embedder failing), the
error says which items were observed and which were not.

Item kinds (:mod:`episeg.adapters._openai_items`): every tool call of the SDK's
tools (function, custom, shell, local shell, apply-patch, computer, hosted MCP,
web and file search, code interpreter...) and every tool output is a ``tool``
turn; an output is typed ``tool-error`` only when the item says it failed,
otherwise left untyped so episeg infers success or failure from its text (the
SDK's failure text is a ``tool-error``); an assistant's refusal is its text.
Items with no conversation (reasoning, compaction, instructions...) are left
out, logged at debug level.

Calls on one conversation (``user``, ``session_id``) run one at a time, also
across ``EpisegSession`` objects of it in one event loop, as ``SQLiteSession``
serialises them: concurrent ``add_items`` keep every turn, in the history's order.

``pop_item`` removes an item from the history; a turn episeg observed for it
stays (the Memory API cannot take back one turn; use forget to erase an
episode). The same item added back next, as the SDK's retry rewind does, is
not observed twice; another item in its place is observed, and a warning says
that the popped turn is kept (:mod:`episeg.adapters._openai_state`). This
object only knows the items it added itself: after a restart, an item popped
and added back is observed again. ``clear_session`` clears the history and
closes the open episode.

>>> import asyncio, tempfile
>>> from episeg.memory import Memory
>>> from episeg.testing import HashingEmbedder
>>> memory = Memory(path=tempfile.mkdtemp(), embedder=HashingEmbedder(), judge=None, scorer=None)
>>> session = EpisegSession("chat-1", memory=memory, user="alice")
>>> asyncio.run(session.add_items([{"role": "user", "content": "deploy prod 2.14"}]))
>>> asyncio.run(session.clear_session())
>>> [e.summary for e in memory.episodes("alice")]
['deploy prod 2.14']
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import TYPE_CHECKING, Any

from episeg.adapters._openai_items import clip_turn, item_to_turn, text_of
from episeg.adapters._openai_state import Key, Rewind, history_key, next_ts, session_lock
from episeg.interfaces.aio import AsyncMemory
from episeg.memory import Memory
from episeg.recall.hits import RecallHit
from episeg.store.tenants import validate_tenant
from episeg.types import Turn

if TYPE_CHECKING:  # the SDK is imported when a session is made (importing it takes ~1.5 s)
    from agents.items import TResponseInputItem
    from agents.memory import Session, SessionSettings

__all__ = ["EpisegSession", "clip_turn", "history_key", "item_to_turn"]

CONTEXT_HEADER = "Relevant memories from earlier conversations (episeg):"
_NOTES_KEPT = 8  # notes made and not yet handed back (a run that failed first leaves one)
log = logging.getLogger(__name__)


def _sqlite_history(key: str, db: str | Path = ":memory:") -> Session:
    try:
        from agents import SQLiteSession
    except ModuleNotFoundError as exc:
        raise ImportError(
            "EpisegSession needs the OpenAI Agents SDK: pip install 'episeg[openai-agents]'"
        ) from exc
    return SQLiteSession(key, db)


class EpisegSession:
    """The SDK ``Session`` protocol, with episeg as the long-term memory.

    Parameters
    ----------
    session_id
        The SDK's session id; also the episeg session of the turns.
    memory
        A :class:`~episeg.memory.Memory` or :class:`~episeg.interfaces.aio.AsyncMemory`.
    user
        The episeg tenant this conversation belongs to.
    history
        The SDK session holding the verbatim items (default an in-memory ``SQLiteSession``).
        One keyed by the bare ``session_id`` is refused: in a shared store (one file for
        every tenant) another tenant's session of that id would read, pop and clear it.
    history_db
        A file for a ``SQLiteSession`` keyed by :func:`history_key` (tenant and session),
        kept across restarts; not with ``history``.
    recall_k
        How many episodes :meth:`input_callback` recalls for each new input.
    """

    session_settings: SessionSettings | None = None

    def __init__(
        self,
        session_id: str,
        *,
        memory: Memory | AsyncMemory,
        user: str,
        history: Session | None = None,
        history_db: str | Path | None = None,
        recall_k: int = 3,
    ) -> None:
        self.session_id = session_id
        self.memory = memory if isinstance(memory, AsyncMemory) else AsyncMemory(memory)
        self.user = validate_tenant(user)
        key = history_key(self.user, session_id)
        if history is not None and history_db is not None:
            raise ValueError("give history or history_db, not both")
        if history is not None and getattr(history, "session_id", None) == session_id:
            raise ValueError(
                f"the history is keyed by the bare session id {session_id!r}: another "
                f"tenant's session {session_id!r} in the same store would read and clear it; "
                f"pass history_db=... or key it by history_key(user, session_id)"
            )
        self.history = history or _sqlite_history(key, history_db or ":memory:")
        self.recall_k = recall_k
        self._rewind = Rewind()
        self._notes: list[str] = []  # the texts of the notes input_callback made, not yet dropped

    async def get_items(self, limit: int | None = None) -> list[TResponseInputItem]:
        """The verbatim history (the latest ``limit`` items)."""
        return await self.history.get_items(limit)

    async def add_items(self, items: list[TResponseInputItem]) -> None:
        """Append to the history and observe each item in episeg, in order.

        The recalled-memories note of :meth:`input_callback` is dropped here: the
        SDK hands it back with the new input, and it is context, not conversation.
        Every item's turn is made before anything is written; an item longer than
        the memory's ``max_turn_chars`` is observed clipped, with a marker saying
        so in its text and a logged warning (:func:`clip_turn`): a long tool output
        never fails the agent's run nor loses the items after it.
        """
        async with session_lock(self.user, self.session_id):
            await self._add(items)

    async def _add(self, items: list[TResponseInputItem]) -> None:
        items = [i for i in items if not self._own_note(i)]
        limit = self.memory.memory.config.intake.max_turn_chars
        made = [self._turn(item) for item in items]
        keys: list[Key] = [_key(t) for t in made]
        again, replaced = self._rewind.plan(keys)
        turns = [
            (n, clip_turn(t, limit, item=n))
            for n, t in enumerate(made)
            if t is not None and not again[n]
        ]
        await self.history.add_items(items)
        self._rewind.consume(len(items))
        for key in replaced:
            log.warning(
                "session %s of %s: a popped item was replaced by another; episeg keeps the "
                "popped %s turn %r (one turn cannot be taken back; forget erases its episode)",
                self.session_id,
                self.user,
                key[0] if key else "?",
                (key[2] if key else "")[:80],
            )
        if any(again):
            log.info(
                "session %s of %s: %d item(s) added back after pop_item are observed already",
                self.session_id,
                self.user,
                sum(again),
            )
        held = [k if again[n] else None for n, k in enumerate(keys)]
        try:
            for done, (n, turn) in enumerate(turns):
                try:
                    await self.memory.observe(turn)
                except Exception as exc:
                    missed = [m for m, _ in turns[done:]]
                    exc.add_note(
                        f"episeg observed items {[m for m, _ in turns[:done]]} of this "
                        f"add_items, not items {missed} (the session history holds all "
                        f"{len(items)})"
                    )
                    raise
                held[n] = keys[n]
        finally:
            self._rewind.added(held)

    def _turn(self, item: Any) -> Turn | None:
        ts = next_ts()
        return item_to_turn(item, user=self.user, session=self.session_id, ts=ts)

    def _own_note(self, item: Any) -> bool:
        """Whether ``item`` is a note :meth:`input_callback` made (forgotten once seen).

        The SDK copies the items it hands back, so a note is known by its role and
        exact text, never by its header alone: a user's message quoting it is kept.
        """
        if not isinstance(item, dict) or item.get("role") != "developer":
            return False
        if item.get("type", "message") != "message" or item.get("content") not in self._notes:
            return False
        self._notes.remove(item["content"])
        return True

    async def pop_item(self) -> TResponseInputItem | None:
        """Remove the latest item from the history.

        episeg keeps a turn it observed for the item; if the same item is added
        back next (the SDK's retry rewind), it is not observed again.
        """
        async with session_lock(self.user, self.session_id):
            item = await self.history.pop_item()
            if item is not None and self._rewind.popped(_key(self._turn(item))):
                log.info(
                    "session %s of %s: item popped from the history; episeg keeps its turn "
                    "(added back unchanged, it is not observed twice)",
                    self.session_id,
                    self.user,
                )
            return item

    async def clear_session(self) -> None:
        """Clear the history and close (score, store) the open episode."""
        async with session_lock(self.user, self.session_id):
            await self.history.clear_session()
            self._rewind.clear()
            await self.memory.flush(self.user, self.session_id)

    async def input_callback(
        self, history: list[TResponseInputItem], new_input: list[TResponseInputItem]
    ) -> list[TResponseInputItem]:
        """``RunConfig(session_input_callback=...)``: history, recalled memories, new input."""
        query = " ".join(text_of(i.get("content")) for i in new_input if isinstance(i, dict))
        if not query.strip():
            return [*history, *new_input]
        lines: list[str] = []
        for hit in await self._recalled(query):
            lines.append(f"- ({hit.episode.session}) {hit.episode.summary}")
            turns = getattr(hit, "turns", ()) or hit.episode.turns  # the matched turns
            lines += [
                f"  {t.actor.value}: {t.text}" for t in turns if t.text != hit.episode.summary
            ]
        if not lines:
            return [*history, *new_input]
        note: Any = {"role": "developer", "content": "\n".join([CONTEXT_HEADER, *lines])}
        self._notes = [*self._notes[1 - _NOTES_KEPT :], note["content"]]
        return [*history, note, *new_input]

    async def _recalled(self, query: str) -> list[RecallHit]:
        """The ``recall_k`` best hits but this conversation's own open turns.

        Recall also searches open segments; this session's are in the history the
        model gets, so they are skipped, and recall is asked for that many more.
        """
        k = self.recall_k
        while True:
            hits = await self.memory.recall(self.user, query, k=k)
            kept = [h for h in hits if not (h.open and h.episode.session == self.session_id)]
            if len(kept) >= self.recall_k or len(hits) < k:
                return kept[: self.recall_k]
            k += len(hits) - len(kept)


def _key(turn: Turn | None) -> Key:
    """What identifies an item's turn across a pop and a re-add (not its ts)."""
    if turn is None:
        return None
    return turn.actor.value, turn.type.value if turn.type else None, turn.text
