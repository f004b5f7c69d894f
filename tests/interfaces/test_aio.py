"""AsyncMemory: the same API as Memory, off the event loop, through the real Memory."""

from __future__ import annotations

import asyncio
import inspect
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from episeg.interfaces.aio import NOT_WRAPPED, AsyncMemory, wrapped_methods
from episeg.memory import Memory
from episeg.testing import HashingEmbedder
from episeg.types import Turn


class SlowEmbedder(HashingEmbedder):
    """Blocks the calling thread like a real model would."""

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        time.sleep(0.05)
        return super().embed(texts)


class TestAsyncMemoryApi:
    def test_every_public_memory_method_has_an_async_twin_with_its_signature(self) -> None:
        public = {
            n for n, _ in inspect.getmembers(Memory, inspect.isfunction) if not n.startswith("_")
        }
        assert {"observe", "flush", "recall", "forget"} <= public
        assert public - set(NOT_WRAPPED) == set(wrapped_methods())
        for name in wrapped_methods():
            twin = getattr(AsyncMemory, name)
            assert inspect.iscoroutinefunction(twin), name
            assert inspect.signature(twin) == inspect.signature(getattr(Memory, name)), name


class TestAsyncMemoryRuns:
    def test_observe_flush_recall_without_blocking_the_loop(self, tmp_path: Path) -> None:
        async def run() -> tuple[int, str, int]:
            memory = await AsyncMemory.open(
                path=tmp_path, embedder=SlowEmbedder(dim=64), judge=None, scorer=None
            )
            ticks = 0

            async def ticker() -> None:
                nonlocal ticks
                while True:
                    await asyncio.sleep(0.005)
                    ticks += 1

            task = asyncio.create_task(ticker())
            texts = ["rotate the jwt key", "done <episode_boundary>", "deploy prod 2.14"]
            for i, text in enumerate(texts):
                actor = "assistant" if i == 1 else "user"
                await memory.observe(Turn(actor=actor, text=text, ts=float(i), user="alice"))
            await memory.flush("alice")
            hits = await memory.recall("alice", "deploy prod", k=1)
            stored = await memory.episodes("alice")
            task.cancel()
            await memory.close()
            return ticks, hits[0].episode.summary, len(stored)

        ticks, summary, stored = asyncio.run(run())
        assert "deploy" in summary and stored == 2
        assert ticks >= 10  # ~5 embed calls x 50 ms ran while the loop kept ticking

    def test_tenants_in_parallel(self, tmp_path: Path) -> None:
        async def run() -> dict[str, list[str]]:
            async with AsyncMemory(
                Memory(path=tmp_path, embedder=HashingEmbedder(dim=64), judge=None, scorer=None)
            ) as memory:
                users = ["alice", "bob", "carol"]
                await asyncio.gather(
                    *(
                        memory.observe(Turn(actor="user", text=f"{u} secret", ts=1.0, user=u))
                        for u in users
                    )
                )
                await memory.flush()
                pages = await asyncio.gather(*(memory.episodes(u) for u in users))
                return {u: [e.summary for e in page] for u, page in zip(users, pages, strict=True)}

        assert asyncio.run(run()) == {u: [f"{u} secret"] for u in ("alice", "bob", "carol")}
