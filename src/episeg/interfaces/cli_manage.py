"""CLI commands that manage what is stored: ``episeg forget``, ``repair`` and ``scrub``.

``episeg forget --user U (--episode ID | --session S | --all)`` erases
everywhere (:meth:`episeg.memory.Memory.forget`): both Chroma collections,
recall's index, the journal (then vacuumed, its WAL truncated) and an
embedded store's file. It prints what was erased (one JSON object with
``--json``); an episode id the user does not have exits 2 and erases nothing.
With ``--chroma-url`` the server's ``chroma.sqlite3`` keeps freed pages until
``chroma vacuum --path DIR`` is run where the server keeps its data, and its
vector files keep the erased vectors (Chroma only marks them deleted) until
``episeg scrub DIR`` is run there with the server stopped: what an embedded
store does each time it is opened (:mod:`episeg.store.scrub`). It refuses a
folder another process has open (Linux ``/proc``, best effort) and one
without Chroma data.

``episeg repair --user U`` rebuilds a tenant's collections after a ``kill -9``
tore embedded Chroma's vector segment (:meth:`episeg.memory.Memory.rebuild_store`;
a store write does it by itself, a read reports it).

>>> import argparse
>>> sub = argparse.ArgumentParser(prog="episeg").add_subparsers(dest="command")
>>> add_parsers(sub, [])
>>> sorted(MANAGE)
['edit', 'episode', 'forget', 'repair', 'scrub', 'tenants', 'unarchive']
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Sequence
from typing import Any

from episeg.interfaces import cli_edit

__all__ = ["MANAGE", "add_parsers"]

_EXIT_NOT_FOUND = 2  # the CLI's EXIT_BAD_INPUT (imported lazily there)


def add_parsers(sub: Any, parents: Sequence[argparse.ArgumentParser]) -> None:
    """Add the management subcommands to the ``episeg`` subparsers ``sub``."""
    cli_edit.add_parsers(sub, parents)  # episode, edit, unarchive, tenants
    p = sub.add_parser(
        "forget",
        parents=list(parents),
        help="erase one episode, one session or a whole user, everywhere",
    )
    p.add_argument("--user", required=True, help="tenant (user) whose data to erase")
    target = p.add_mutually_exclusive_group(required=True)
    target.add_argument("--episode", metavar="ID", help="one stored episode")
    target.add_argument("--session", metavar="S", help="one session: its episodes and open turns")
    target.add_argument("--all", action="store_true", help="everything of --user")
    r = sub.add_parser(
        "repair",
        parents=list(parents),
        help="rebuild a user's collections after kill -9 tore embedded Chroma's vector index",
    )
    r.add_argument("--user", required=True, help="tenant (user) whose collections to rebuild")
    for each in (p, r) if not parents else ():  # the doctest builds the parser alone
        each.add_argument("--path", default=".episeg")
        each.add_argument("--chroma-url")
        each.add_argument("--json", action="store_true")
    s = sub.add_parser(
        "scrub", help="zero erased vectors and stale slots in a stopped Chroma server's folder"
    )
    s.add_argument("folder", help="the --path of a `chroma run` server that is not running")
    s.add_argument("--json", action="store_true", help="machine-readable JSON on stdout")


def _scrub(args: argparse.Namespace) -> int:
    from pathlib import Path

    from episeg.errors import ArgumentError
    from episeg.store.scrub import processes_using, scrub_store

    folder = Path(args.folder)
    if not (folder / "chroma.sqlite3").is_file():
        raise ArgumentError(f"{folder} holds no Chroma data (no chroma.sqlite3)")
    holders = processes_using(folder)
    if holders:
        pids = ", ".join(map(str, holders))
        raise ArgumentError(f"{folder} is open in process(es) {pids}: stop the server first")
    rewritten = scrub_store(folder)
    if args.json:
        print(json.dumps({"folder": str(folder), "bytes_zeroed": rewritten}))
    else:
        print(f"zeroed {rewritten} byte(s) of erased vectors and stale slots in {folder}")
    return 0


def _repair(args: argparse.Namespace) -> int:
    from episeg.interfaces.runtime import open_memory

    memory = open_memory(args.path, chroma_url=args.chroma_url)
    try:
        kept = memory.rebuild_store(args.user)
        stored = memory.retry_pending()
    finally:
        memory.close()
    if args.json:
        print(json.dumps({"user": args.user, "episodes": kept, "pending_stored": len(stored)}))
    else:
        print(f"rebuilt {args.user}: {kept} episode(s) kept, {len(stored)} pending write(s) stored")
    return 0


def _forget(args: argparse.Namespace) -> int:
    from episeg.interfaces.runtime import open_memory

    memory = open_memory(args.path, chroma_url=args.chroma_url)
    try:
        report = memory.forget(args.user, episode=args.episode, session=args.session, all=args.all)
    finally:
        memory.close()
    if report.missing:
        print(
            f"episeg: error: user {args.user!r} has no episode {report.missing[0]!r}; "
            "nothing erased",
            file=sys.stderr,
        )
        return _EXIT_NOT_FOUND
    if args.json:
        print(json.dumps(report.to_dict(), ensure_ascii=False))
    else:
        what = "everything" if report.tenant else f"{len(report.episodes)} episode(s)"
        print(f"forgot {what} of {args.user} ({report.turns} journaled turn(s))")
        if not report.vacuumed:
            print(
                "the Chroma server keeps freed pages until `chroma vacuum --path DIR` runs there, "
                "and the erased vectors until `episeg scrub DIR` runs there, the server stopped"
            )
    return 0


MANAGE: dict[str, Callable[[argparse.Namespace], int]] = {
    "forget": _forget,
    "repair": _repair,
    "scrub": _scrub,
    **cli_edit.EDIT,
}
