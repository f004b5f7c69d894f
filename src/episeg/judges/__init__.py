"""Prediction-error judges (seed signal 3): Anthropic, OpenAI-compatible, local.

Each implements :class:`episeg.typing.Judge`: ``judge(summary, recent, turn)``
returns a :class:`~episeg.typing.JudgeAnswer` (continue / boundary /
sub-episode and the updated one-line summary) or raises
:class:`~episeg.errors.JudgeError`.

>>> from episeg.judges import AnthropicJudge, LocalJudge, OpenAICompatibleJudge
>>> from episeg.testing import HashingEmbedder
>>> from episeg.typing import Judge
>>> isinstance(LocalJudge(HashingEmbedder()), Judge)
True
"""

from episeg.judges._base import LLMJudge
from episeg.judges.anthropic_judge import AnthropicJudge
from episeg.judges.local import LocalJudge
from episeg.judges.openai_judge import OpenAICompatibleJudge

__all__ = ["AnthropicJudge", "LLMJudge", "LocalJudge", "OpenAICompatibleJudge"]
