"""``AsyncMemory``: :class:`~episeg.memory.Memory` for asyncio code.

Every public method of ``Memory`` has an ``async`` twin here with the same name,
signature and docstring (generated from it, so the two cannot drift), which
runs it in a thread executor, so embedding, judging and store writes never
block the event loop. ``Memory`` serialises its own writes with a lock, so
concurrent coroutines are safe; turns of one session must still be awaited in
order (an ``asyncio.gather`` over one session's turns has no defined order).

>>> import asyncio, tempfile
>>> from episeg.testing import HashingEmbedder
>>> from episeg.types import Turn
>>> async def main() -> str:
...     memory = await AsyncMemory.open(path=tempfile.mkdtemp(), embedder=HashingEmbedder(),
...                                     judge=None, scorer=None)
...     await memory.observe(Turn(actor="user", text="deploy prod 2.14", ts=1.0, user="alice"))
...     await memory.flush()
...     hits = await memory.recall("alice", "deploy", k=1)
...     await memory.close()
...     return hits[0].episode.summary
>>> asyncio.run(main())
'deploy prod 2.14'
"""

from __future__ import annotations

import asyncio
import functools
import inspect
from collections.abc import Callable, Coroutine
from concurrent.futures import Executor
from typing import Any, Concatenate, ParamSpec, TypeVar

from episeg.memory import Memory

__all__ = ["NOT_WRAPPED", "AsyncMemory", "wrapped_methods"]

_P = ParamSpec("_P")
_R = TypeVar("_R")


def _off_loop(
    method: Callable[Concatenate[Memory, _P], _R],
) -> Callable[Concatenate[AsyncMemory, _P], Coroutine[Any, Any, _R]]:
    """An ``async def`` with ``method``'s signature that runs it in the executor."""

    async def call(self: AsyncMemory, /, *args: _P.args, **kwargs: _P.kwargs) -> _R:
        loop = asyncio.get_running_loop()
        bound = functools.partial(method, self.memory, *args, **kwargs)
        return await loop.run_in_executor(self._executor, bound)

    functools.update_wrapper(call, method)
    return call


#: ``Memory`` methods with no async twin, and why
NOT_WRAPPED = {
    "tenant_lock": "a thread lock; hold it inside one executor call instead",
    "export": "a lazy iterator that reads the store as it is consumed; use export_to",
}


def wrapped_methods() -> list[str]:
    """The public methods of ``Memory`` that have an ``async`` twin here.

    >>> "observe" in wrapped_methods() and "recall" in wrapped_methods()
    True
    """
    return sorted(
        name  # inherited too: Memory's methods live in its mixins
        for name, _ in inspect.getmembers(Memory, inspect.isfunction)
        if not name.startswith("_") and name not in NOT_WRAPPED
    )


class AsyncMemory:
    """An asyncio facade over one :class:`Memory`.

    Parameters
    ----------
    memory
        The wrapped memory (build one off the loop with :meth:`open`, which
        loads the embedder in a thread).
    executor
        Where the blocking calls run; default the loop's default executor.
    """

    def __init__(self, memory: Memory, *, executor: Executor | None = None) -> None:
        self.memory = memory
        self._executor = executor

    @classmethod
    async def open(cls, *, executor: Executor | None = None, **kwargs: Any) -> AsyncMemory:
        """Build a ``Memory(**kwargs)`` in a thread (it may load a model) and wrap it."""
        loop = asyncio.get_running_loop()
        memory = await loop.run_in_executor(executor, functools.partial(Memory, **kwargs))
        return cls(memory, executor=executor)

    # writing
    observe = _off_loop(Memory.observe)
    ingest = _off_loop(Memory.ingest)
    flush = _off_loop(Memory.flush)
    store_episodes = _off_loop(Memory.store_episodes)
    pending_writes = _off_loop(Memory.pending_writes)
    retry_pending = _off_loop(Memory.retry_pending)
    retry_due = _off_loop(Memory.retry_due)
    close_idle = _off_loop(Memory.close_idle)
    rebuild_store = _off_loop(Memory.rebuild_store)
    close = _off_loop(Memory.close)
    # reading
    store = _off_loop(Memory.store)
    episodes = _off_loop(Memory.episodes)
    recall = _off_loop(Memory.recall)
    confirm_used = _off_loop(Memory.confirm_used)
    feedback = _off_loop(Memory.feedback)
    recaller = _off_loop(Memory.recaller)
    maintain = _off_loop(Memory.maintain)
    # managing stored episodes
    episode = _off_loop(Memory.episode)
    update_episode = _off_loop(Memory.update_episode)
    unarchive = _off_loop(Memory.unarchive)
    tenants = _off_loop(Memory.tenants)
    # moving a tenant
    export_to = _off_loop(Memory.export_to)
    import_episodes = _off_loop(Memory.import_episodes)
    # erasing
    forget = _off_loop(Memory.forget)

    async def __aenter__(self) -> AsyncMemory:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()
