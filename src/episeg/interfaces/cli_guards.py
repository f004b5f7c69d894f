"""What ``episeg``'s entry point checks before and after a command: argv text, a closed pipe.

An argument that is not valid UTF-8 (bytes Python keeps as lone surrogates)
is refused before any command runs, naming it, so no command meets text it
cannot store or embed. When the reader of stdout goes away
(``episeg export | head``) the command stops quietly with 141 (128 + SIGPIPE,
what a shell reports for ``cat big | head``), as Unix tools do.

>>> print(not_utf8(["recall", "caf\\udce9"]))
argument 2 (caf\\xe9) is not valid UTF-8
>>> not_utf8(["recall", "café"]) is None
True
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence

__all__ = ["EXIT_BROKEN_PIPE", "not_utf8", "pipe_closed"]

EXIT_BROKEN_PIPE = 141


def not_utf8(argv: Sequence[str]) -> str | None:
    """What is wrong with the first argument that is not valid UTF-8, or ``None``."""
    for number, arg in enumerate(argv, start=1):
        try:
            arg.encode("utf-8")
        except UnicodeEncodeError:
            shown = arg.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
            return f"argument {number} ({shown}) is not valid UTF-8"
    return None


def pipe_closed() -> int:
    """Stop quietly after a ``BrokenPipeError`` on stdout; returns the exit code.

    Later writes (the interpreter's last flush included) go to the null
    device, so no "Exception ignored" line follows on stderr.
    """
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):  # a stdout without a file descriptor
        pass
    return EXIT_BROKEN_PIPE
