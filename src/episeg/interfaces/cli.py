"""The ``episeg`` command line.

Exit codes: 0 ok, 2 bad input or configuration (any :class:`EpisegError`, an
argument that is not valid UTF-8), 3 store unreachable
(:class:`StoreUnavailableError`), 141 (128 + SIGPIPE, as ``cat`` under a
shell) when the reader of stdout went away (``episeg export | head``), quietly.

>>> main(["--help"])  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
SystemExit: 0
>>> _parse(["--log-format", "json", "eval", "--k", "3"]).rest
['--k', '3']
"""

from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import Sequence
from importlib.metadata import PackageNotFoundError, version

from episeg.errors import EpisegError, StoreUnavailableError
from episeg.interfaces.cli_guards import EXIT_BROKEN_PIPE, not_utf8, pipe_closed
from episeg.interfaces.cli_manage import MANAGE
from episeg.interfaces.cli_manage import add_parsers as add_manage_parsers
from episeg.interfaces.cli_transfer import TRANSFER
from episeg.interfaces.cli_transfer import add_parsers as add_transfer_parsers
from episeg.interfaces.logs import LOG_FORMATS, configure_logging

__all__ = ["EXIT_BAD_INPUT", "EXIT_BROKEN_PIPE", "EXIT_STORE_DOWN", "main"]

EXIT_BAD_INPUT = 2
EXIT_STORE_DOWN = 3
_DELEGATES = ("eval", "bench", "train")
_VALUED = ("--log-format",)  # top-level options whose value is the next token

_EXAMPLES = """\
examples:
  episeg demo
  episeg ingest chat.jsonl --user alice            # stream a transcript into alice's memory
  cat chat.jsonl | episeg ingest - --assign-ts     # from stdin, ts after the session's last
  episeg episodes --user alice --json
  episeg recall --user alice "how did we fix the 401?" --k 3
  episeg maintain --user alice --archive
  episeg report chat.jsonl -o report.html          # HTML timeline of the segmentation
  episeg serve --keys-file keys.json --port 8080   # HTTP API, bearer key per tenant
  episeg mcp --user alice                          # MCP stdio server for Claude Desktop/Code
  episeg calibration --user alice
  episeg export --user alice --out alice.jsonl    # all of alice's episodes as JSONL
  episeg import --user bob alice.jsonl             # ... into bob's memory, all or nothing
  episeg ingest chat.jsonl --chroma-url http://127.0.0.1:8000   # a `chroma run` server
"""


class _Formatter(argparse.RawDescriptionHelpFormatter):
    """Keeps the examples' layout and appends each flag's default when it has a real one."""

    def _get_help_string(self, action: argparse.Action) -> str:
        text = action.help or ""
        default = action.default
        if (  # by identity: a default of 0 is a real one (0 == False would hide it)
            "%(default)" not in text
            and default is not None
            and default is not False
            and default is not argparse.SUPPRESS
            and action.option_strings
        ):
            text += " (default: %(default)s)"
        return text


def _version() -> str:
    try:
        return version("episeg")
    except PackageNotFoundError:  # a source tree that is not installed
        return "0+unknown"


def _common() -> argparse.ArgumentParser:
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--path", default=".episeg", help="store folder (embedded Chroma)")
    common.add_argument(
        "--chroma-url",
        metavar="URL",
        help="http://host:port of a `chroma run` server instead of --path",
    )
    common.add_argument("--json", action="store_true", help="machine-readable JSON on stdout")
    common.add_argument(
        "-v",
        "--verbose",
        action="count",
        default=argparse.SUPPRESS,
        help="log more (-v info, -vv debug)",
    )
    return common


def _user(p: argparse.ArgumentParser) -> None:
    p.add_argument("--user", default="default", help="tenant (user) whose memory to use")


def _build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="episeg",
        description="Episodic memory for AI agents: segment, score, store, recall.",
        epilog=_EXAMPLES,
        formatter_class=_Formatter,
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {_version()}")
    parser.add_argument(
        "-v", "--verbose", action="count", default=0, help="log more (-v info, -vv debug)"
    )
    parser.add_argument(
        "--log-format",
        choices=LOG_FORMATS,
        default="text",
        help="log lines on stderr: plain text, or one JSON object per record",
    )
    sub = parser.add_subparsers(dest="command", required=True)
    demo = sub.add_parser("demo", help="run the offline pipeline on the bundled conversation")
    demo.add_argument("--path", help="store folder (default: a new temporary folder)")
    c = [_common()]

    p = sub.add_parser("ingest", parents=c, help="stream a JSONL transcript into memory")
    p.add_argument("file", help="JSONL transcript, or - for stdin")
    p.add_argument("--user", help="user (tenant) for turns that lack one")
    p.add_argument("--session", help="session for turns that lack one")
    p.add_argument(
        "--assign-ts",
        action="store_true",
        help="give turns without ts the previous ts + 1, after the session's last recorded ts",
    )
    p.add_argument(
        "--no-flush",
        action="store_true",
        help="leave the last episode of each session fed open (not stored)",
    )
    p.add_argument(
        "--progress-every",
        type=int,
        default=1000,
        metavar="N",
        help="progress on stderr: a bar on a terminal, else a line every N turns (0: none)",
    )

    p = sub.add_parser("episodes", parents=c, help="list a tenant's stored episodes")
    _user(p)
    p.add_argument("--limit", type=int, default=100, help="at most this many episodes")
    p.add_argument("--offset", type=int, default=0, help="skip this many episodes first")
    p.add_argument("--archived", action="store_true", help="include archived episodes")
    p.add_argument("--turns", action="store_true", help="print each episode's turns")

    p = sub.add_parser("recall", parents=c, help="recall a tenant's episodes for a query")
    _user(p)
    p.add_argument("query", help="what to remember, in words")
    p.add_argument("--k", type=int, default=5, help="how many episodes to return")
    p.add_argument(
        "--max-words",
        type=int,
        metavar="N",
        help="word budget across all returned turns (default: no cap; the MCP tool's is 300)",
    )
    p.add_argument("--since", metavar="WHEN", help="only episodes after this ISO date or epoch")
    p.add_argument("--until", metavar="WHEN", help="only episodes before this ISO date or epoch")
    p.add_argument("--session", help="only this session")
    p.add_argument(
        "--meta",
        action="append",
        metavar="KEY=VALUE",
        help="only episodes whose user metadata holds this pair (repeatable)",
    )
    p.add_argument("--min-score", type=float, metavar="X", help="no hit scoring below X")
    p.add_argument(
        "--expand",
        choices=["turns", "episode"],
        default="turns",
        help="what each hit returns",
    )
    p.add_argument("--context", type=int, default=0, help="turns of context around each match")
    p.add_argument("--neighbours", type=int, default=0, help="adjacent episodes to list per hit")

    p = sub.add_parser("used", parents=c, help="confirm recalled episodes were used (reinforces)")
    _user(p)
    p.add_argument("episode_ids", nargs="+", metavar="ID", help="episode ids from recall")

    p = sub.add_parser("maintain", parents=c, help="decay never-recalled episodes")
    _user(p)
    p.add_argument("--archive", action="store_true", help="archive faded episodes")

    p = sub.add_parser("calibration", parents=c, help="salience histogram of a tenant")
    _user(p)

    p = sub.add_parser("report", parents=c, help="HTML timeline of a transcript's segmentation")
    p.add_argument("file", help="JSONL transcript, or - for stdin")
    p.add_argument("-o", "--output", default="report.html", help="HTML file to write")
    p.add_argument("--user", help="user for turns that lack one")
    p.add_argument("--session", help="session for turns that lack one")
    p.add_argument(
        "--assign-ts", action="store_true", help="give turns without ts the previous ts + 1"
    )
    p.add_argument("--title", default=None, help="page title (default: episeg segmentation report)")

    p = sub.add_parser("serve", parents=c, help="HTTP service (FastAPI + uvicorn)")
    p.add_argument("--host", default="127.0.0.1", help="interface to listen on")
    p.add_argument("--port", type=int, default=8080, help="TCP port to listen on")
    p.add_argument("--keys-file", help="JSON {key: tenant}; default $EPISEG_KEYS_FILE")
    p.add_argument(
        "--max-body",
        type=int,
        default=1 << 20,
        metavar="BYTES",
        help="largest request body accepted; larger gets 413",
    )
    p.add_argument(
        "--max-tenant-requests",
        type=int,
        default=8,
        metavar="N",
        help="requests of one tenant in flight at once; the next gets 429 (Retry-After: 1)",
    )

    p = sub.add_parser("mcp", parents=c, help="MCP stdio server bound to one user")
    p.add_argument("--user", required=True, help="the one tenant this server reads and writes")
    add_manage_parsers(sub, c)  # forget
    add_transfer_parsers(sub, c)  # export, import

    for name, what in (
        ("eval", "episeg.evaluation"),
        ("bench", "episeg.benchmarks"),
        ("train", "episeg.evaluation.train_segmenter ('train segmenter')"),
    ):
        p = sub.add_parser(
            name, help=f"delegate to {what} (arguments pass through)", add_help=False
        )
        p.set_defaults(rest=[])
    for command in sub.choices.values():
        command.formatter_class = _Formatter
    return parser


def _parse(argv: list[str]) -> argparse.Namespace:
    # eval/bench/train hand every later argument (options included) to the delegate.
    index, value_next = 0, False
    for index, token in enumerate(argv):
        if value_next:  # the value of --log-format, not a command
            value_next = False
            continue
        if token in _DELEGATES:
            head = _build_parser().parse_args([*argv[:index], token])
            head.rest = argv[index + 1 :]
            return head
        if not token.startswith("-"):
            break
        value_next = token in _VALUED
    return _build_parser().parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point; returns the process exit code."""
    argv = list(sys.argv[1:] if argv is None else argv)
    invalid = not_utf8(argv)
    if invalid is not None:
        print(f"episeg: error: {invalid}", file=sys.stderr)
        return EXIT_BAD_INPUT
    args = _parse(argv)
    level = {0: logging.WARNING, 1: logging.INFO}.get(args.verbose, logging.DEBUG)
    try:
        configure_logging(level, json=args.log_format == "json")
        if args.command == "demo":
            from episeg.interfaces.demo import run_demo

            run_demo(sys.stdout, path=args.path)
            return 0
        from episeg.interfaces.cli_commands import COMMANDS

        if args.command in MANAGE:
            return MANAGE[args.command](args)
        if args.command in TRANSFER:
            return TRANSFER[args.command](args)
        return COMMANDS[args.command](args)
    except StoreUnavailableError as exc:
        print(f"episeg: store unreachable: {exc}", file=sys.stderr)
        return EXIT_STORE_DOWN
    except EpisegError as exc:
        print(f"episeg: error: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except BrokenPipeError:
        return pipe_closed()
    except OSError as exc:  # a missing transcript file, an unwritable output
        print(f"episeg: error: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
