"""Helpers for tests, shipped so users can test their own integrations.

Fakes here are for unit tests of logic only; every feature of episeg is also
tested through the real embedder, real Chroma and the real SDKs.
"""

from episeg.testing.chroma_server import ChromaServer, free_port, stop_process
from episeg.testing.fakes import HashingEmbedder, MiniLMShaped, ScriptedJudge
from episeg.testing.llm_server import LoopbackLLMServer, RecordedRequest, Reply
from episeg.testing.memory_store import InMemoryBackend, InMemoryEpisodeStore

__all__ = [
    "ChromaServer",
    "HashingEmbedder",
    "InMemoryBackend",
    "InMemoryEpisodeStore",
    "LoopbackLLMServer",
    "MiniLMShaped",
    "RecordedRequest",
    "Reply",
    "ScriptedJudge",
    "free_port",
    "stop_process",
]
