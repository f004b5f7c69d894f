"""The ``episeg`` command line.

>>> main(["--help"])  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
SystemExit: 0
"""

from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import Sequence

from episeg.errors import EpisegError

__all__ = ["main"]


def _build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="episeg",
        description="Episodic memory for AI agents: segment, score, store, recall.",
        epilog="example: episeg demo",
    )
    parser.add_argument("-v", "--verbose", action="count", default=0,
                        help="log more (-v info, -vv debug)")
    sub = parser.add_subparsers(dest="command", required=True)
    demo = sub.add_parser("demo", help="run the offline pipeline on the bundled conversation")
    demo.add_argument("--path", help="store folder (default: a new temporary folder)")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point; returns the process exit code."""
    args = _build_parser().parse_args(argv)
    level = {0: logging.WARNING, 1: logging.INFO}.get(args.verbose, logging.DEBUG)
    logging.basicConfig(level=level, format="%(levelname)s %(name)s: %(message)s")
    try:
        if args.command == "demo":
            from episeg.demo import run_demo
            run_demo(sys.stdout, path=args.path)
        return 0
    except EpisegError as exc:
        print(f"episeg: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
