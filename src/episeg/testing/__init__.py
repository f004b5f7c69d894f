"""Helpers for tests, shipped so users can test their own integrations.

Fakes here are for unit tests of logic only; every feature of episeg is also
tested through the real embedder, real Chroma and the real SDKs.
"""

from episeg.testing.fakes import HashingEmbedder, ScriptedJudge

__all__ = ["HashingEmbedder", "ScriptedJudge"]
