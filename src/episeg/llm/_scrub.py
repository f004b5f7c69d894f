"""What of a server's error text may go into errors, logs, the journal and stored reasons.

An LLM server's error body is foreign text: it can echo the API key ("Incorrect API key
provided: sk-..."), be megabytes long (an OpenAI ``refusal``), or hold a lone surrogate
that no UTF-8 store can write. :func:`scrub` makes it safe before anything records it:
the backend's own key and anything shaped like a provider key become ``***``, a lone
surrogate becomes its ``\\udcxx`` escape, and the text is clipped.

>>> scrub("Incorrect API key provided: sk-live-ABCDEF123456", secrets=["sk-live-ABCDEF123456"])
'Incorrect API key provided: ***'
>>> scrub("key sk-ant-api03-xyzXYZ0123456789 refused")
'key sk-*** refused'
>>> scrub("bad \\udc80 request")
'bad \\\\udc80 request'
>>> len(scrub("x" * 10_000))
300
"""

from __future__ import annotations

import re
from collections.abc import Iterable

__all__ = ["LIMIT", "scrub"]

LIMIT = 300
_KEYISH = re.compile(r"\bsk-[A-Za-z0-9_\-]{8,}")


def scrub(text: str, secrets: Iterable[str | None] = (), *, limit: int = LIMIT) -> str:
    """``text`` without ``secrets`` or key-shaped tokens, lone surrogates escaped, clipped."""
    for secret in secrets:
        if secret and len(secret) >= 4:
            text = text.replace(secret, "***")
    text = _KEYISH.sub("sk-***", text)
    text = text.encode("utf-8", "backslashreplace").decode("utf-8")
    return text if len(text) <= limit else text[: limit - 1] + "…"
