"""The optional request parameters, adapted once when a model refuses one.

episeg asks at temperature 0 with a small output budget. Newer models refuse parts
of that with HTTP 400, and each refusal would otherwise fail every call the judge or
the scorer makes: Anthropic's newer Claude models answer "`temperature` is deprecated
for this model", and OpenAI's reasoning models (GPT-5, o-series) answer
"'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead."
and "'temperature' does not support 0 with this model". :class:`RequestOptions`
holds what is sent; :meth:`RequestOptions.adapt` reads such a refusal, drops the
temperature or moves the budget to ``max_completion_tokens`` (raised to
:data:`REASONING_BUDGET`, since that budget also pays the model's hidden reasoning),
logs it once, and says whether sending again can help. The change lasts for the
backend's lifetime; any other 400 is left to the caller as a rejected request.

>>> options = RequestOptions(temperature=0.0, max_tokens=256)
>>> options.body()
{'temperature': 0.0, 'max_tokens': 256}
>>> options.adapt("Unsupported parameter: 'max_tokens' is not supported with this "
...               "model. Use 'max_completion_tokens' instead.", param="max_tokens")
True
>>> options.adapt("`temperature` is deprecated for this model.")
True
>>> options.body(), options.budget_name
({'max_completion_tokens': 4096}, 'max_completion_tokens')
>>> options.adapt("prompt is too long")
False
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import Any, TypeVar

__all__ = ["REASONING_BUDGET", "RequestOptions", "send_adapting"]

T = TypeVar("T")

log = logging.getLogger(__name__)

REASONING_BUDGET = 4096
"""Output budget once a model counts its reasoning in it (``max_completion_tokens``)."""

_REFUSAL_WORDS = ("deprecated", "not supported", "unsupported", "does not support")


class RequestOptions:
    """Temperature and output budget of one backend's requests; thread-safe.

    Parameters
    ----------
    temperature : float or None
        Sent while the model takes it; ``None`` never sends it.
    max_tokens : int
        The output budget, sent as ``max_tokens`` until a model asks for
        ``max_completion_tokens``.
    """

    def __init__(self, *, temperature: float | None, max_tokens: int) -> None:
        self._lock = threading.Lock()
        self._temperature = temperature
        self._max_tokens = max_tokens
        self._budget_name = "max_tokens"

    @property
    def budget_name(self) -> str:
        """The field the output budget goes in: ``max_tokens`` or ``max_completion_tokens``."""
        with self._lock:
            return self._budget_name

    @property
    def budget(self) -> int:
        with self._lock:
            return self._max_tokens

    @property
    def temperature(self) -> float | None:
        with self._lock:
            return self._temperature

    def body(self) -> dict[str, Any]:
        """The parameters to send now."""
        with self._lock:
            sent: dict[str, Any] = {}
            if self._temperature is not None:
                sent["temperature"] = self._temperature
            sent[self._budget_name] = self._max_tokens
            return sent

    def adapt(self, message: str, *, param: str | None = None, model: str = "the model") -> bool:
        """Take a 400's ``message`` (and the ``param`` it names, when the API says): True if a
        parameter was changed so that the same request may now be accepted."""
        text = message.lower()
        names = {param} if param else set()
        names |= {name for name in ("temperature", "max_tokens") if name in text}
        if not any(word in text for word in _REFUSAL_WORDS):
            return False
        with self._lock:
            if "temperature" in names and self._temperature is not None:
                self._temperature = None
                change = "sending no temperature"
            elif (
                "max_tokens" in names
                and "max_completion_tokens" in text
                and self._budget_name == "max_tokens"
            ):
                self._budget_name = "max_completion_tokens"
                self._max_tokens = max(self._max_tokens, REASONING_BUDGET)
                change = f"sending max_completion_tokens={self._max_tokens}"
            else:
                return False
        log.warning("%s refused a request parameter (%s): %s from now on", model, message, change)
        return True


def send_adapting(
    run: Callable[[Callable[[], T]], T], send: Callable[[], T], adapt: Callable[[Exception], bool]
) -> T:
    """``run(send)``, sent again (at most twice) while ``adapt`` changes what a refusal named."""
    for changes_left in (2, 1, 0):
        try:
            return run(send)
        except Exception as exc:
            if not changes_left or not adapt(exc):
                raise
    raise AssertionError("unreachable")  # pragma: no cover
