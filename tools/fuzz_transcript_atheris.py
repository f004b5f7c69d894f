"""Bounded coverage-guided fuzzing of the JSONL reader with atheris (not in the test suite).

Lives outside the pytest paths because pytest --doctest-modules imports every module there
and atheris is not a dependency: install it first with ``.venv/bin/pip install atheris``.

Usage: ``.venv/bin/python tools/fuzz_transcript_atheris.py -runs=200000
-max_total_time=60``. Any exception other than ``TurnValidationError`` is reported by
atheris as a crash (with the input saved as ``crash-*``). ``RecursionError`` and
``OverflowError`` are known open findings (see docs/RELIABILITY.md) and counted, not
raised, unless ``EPISEG_FUZZ_STRICT=1``.
"""

from __future__ import annotations

import atexit
import os
import sys
import time

import atheris

from episeg import types
from episeg.errors import TurnValidationError
from episeg.interfaces import transcript
from episeg.interfaces.transcript import iter_turns

# Instrument only the reader's own code: instrument_imports() would also instrument
# chromadb (pulled in by the package root) and spend minutes doing it.
for func in (
    transcript.iter_turns,
    transcript._decode,
    transcript._normalise,
    types.Turn.from_dict,
    types.Turn.__post_init__,
    types.enums._ParsableEnum.__dict__["parse"].__func__,
):
    atheris.instrument_func(func)

STRICT = os.environ.get("EPISEG_FUZZ_STRICT") == "1"
COUNTS = {"inputs": 0, "turns": 0, "refused": 0, "known_findings": 0}
STARTED = time.monotonic()


def one_input(data: bytes) -> None:
    COUNTS["inputs"] += 1
    if COUNTS["inputs"] % 100_000 == 0:
        report()
    try:
        for _ in iter_turns(data.splitlines(keepends=True), assign_ts=len(data) % 2 == 0):
            COUNTS["turns"] += 1
    except TurnValidationError:
        COUNTS["refused"] += 1
    except (RecursionError, OverflowError):
        if STRICT:
            raise
        COUNTS["known_findings"] += 1
        if COUNTS["known_findings"] == 1:
            print(f"first known finding after {COUNTS['inputs']} inputs", file=sys.stderr)


def report() -> None:
    print(f"atheris figures: {COUNTS} in {time.monotonic() - STARTED:.1f}s", file=sys.stderr)


if __name__ == "__main__":
    atexit.register(report)
    atheris.Setup(sys.argv, one_input)
    atheris.Fuzz()
