"""CLI commands that show and edit stored episodes, and list tenants.

``episeg episode --user U ID``
    One episode (read-only: no model, no journal, so it works beside a
    running service). Exit 2 if the user has no such episode.
``episeg edit --user U ID [--summary S] [--pin | --unpin] [--salience N] [--meta K=V ...]``
    Edit it (:meth:`episeg.memory.Memory.update_episode`): all given fields
    change together or none does. ``--meta`` pairs *replace* the user
    metadata (``--clear-meta`` empties it); a value is read as JSON when it
    is a JSON number, ``true``/``false`` or a quoted string, else as text
    (``--meta ticket=4211`` is the integer 4211, ``--meta 'ticket="4211"'`` the
    string).
``episeg unarchive --user U ID``
    Bring an archived episode back into recall.
``episeg tenants``
    The operator's list of tenants with stored episodes (read-only).

>>> parse_meta(["project=auth", "ticket=4211", "done=true", 'code="07"', "note=a=b"])
{'project': 'auth', 'ticket': 4211, 'done': True, 'code': '07', 'note': 'a=b'}
>>> parse_meta(["oops"])
Traceback (most recent call last):
...
episeg.errors.MetadataError: --meta wants KEY=VALUE, got 'oops'
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable, Sequence
from typing import Any

from episeg.config.overrides import key_and_value
from episeg.errors import EpisodeNotFoundError, MetadataError
from episeg.store.usermeta import MetaScalar, validate_metadata

__all__ = ["EDIT", "add_parsers", "parse_meta"]


def parse_meta(pairs: Sequence[str]) -> dict[str, MetaScalar]:
    """``KEY=VALUE`` pairs as validated user metadata (see the module docstring)."""
    out: dict[str, object] = {}
    for pair in pairs:
        split = key_and_value(pair)
        if split is None:
            raise MetadataError(f"--meta wants KEY=VALUE, got {pair!r}")
        key, value = split
        out[key] = value if isinstance(value, str | int | float | bool) else pair.partition("=")[2]
    return validate_metadata(out, what="--meta")


def add_parsers(sub: Any, parents: Sequence[argparse.ArgumentParser]) -> None:
    """Add ``episode``, ``edit``, ``unarchive`` and ``tenants`` to the subparsers ``sub``."""
    common = list(parents)
    p = sub.add_parser("episode", parents=common, help="show one stored episode (read-only)")
    p.add_argument("--user", required=True, help="tenant (user) the episode belongs to")
    p.add_argument("episode_id", metavar="ID", help="the episode id")
    p.add_argument("--turns", action="store_true", help="print the episode's turns")

    p = sub.add_parser("edit", parents=common, help="edit an episode: summary, pin, salience, meta")
    p.add_argument("--user", required=True, help="tenant (user) the episode belongs to")
    p.add_argument("episode_id", metavar="ID", help="the episode id")
    p.add_argument("--summary", help="new summary")
    pin = p.add_mutually_exclusive_group()
    pin.add_argument(
        "--pin", dest="pinned", action="store_const", const=True, help="never decay or archive it"
    )
    pin.add_argument("--unpin", dest="pinned", action="store_const", const=False, help="unpin it")
    p.add_argument("--salience", type=int, metavar="N", help="user-set salience 1-10")
    meta = p.add_mutually_exclusive_group()
    meta.add_argument(
        "--meta", action="append", metavar="KEY=VALUE", help="user metadata (replaces it whole)"
    )
    meta.add_argument("--clear-meta", action="store_true", help="remove all user metadata")

    p = sub.add_parser("unarchive", parents=common, help="bring an archived episode back")
    p.add_argument("--user", required=True, help="tenant (user) the episode belongs to")
    p.add_argument("episode_id", metavar="ID", help="the episode id")

    sub.add_parser("tenants", parents=common, help="list tenants with stored episodes (operator)")


def _print_episode(args: argparse.Namespace, episode: Any) -> None:
    from episeg.interfaces.views import episode_lines, episode_view

    if args.json:
        print(json.dumps(episode_view(episode), ensure_ascii=False))
        return
    for line in episode_lines(1, episode, turns=getattr(args, "turns", False)):
        print(line)


def _episode(args: argparse.Namespace) -> int:
    from episeg.interfaces.runtime import open_backend
    from episeg.store.tenants import validate_tenant

    store = open_backend(args.path, args.chroma_url).store_for(validate_tenant(args.user))
    found = store.get([args.episode_id])
    if not found:
        raise EpisodeNotFoundError(f"user {args.user!r} has no episode {args.episode_id!r}")
    _print_episode(args, found[0])
    return 0


def _edit(args: argparse.Namespace) -> int:
    from episeg.interfaces.runtime import open_memory

    metadata = {} if args.clear_meta else (parse_meta(args.meta) if args.meta else None)
    if args.summary is None and args.pinned is None and args.salience is None and metadata is None:
        raise MetadataError("nothing to edit: give --summary, --pin/--unpin, --salience or --meta")
    memory = open_memory(args.path, chroma_url=args.chroma_url)
    try:
        edited = memory.update_episode(
            args.user,
            args.episode_id,
            summary=args.summary,
            pinned=args.pinned,
            salience=args.salience,
            metadata=metadata,
        )
    finally:
        memory.close()
    _print_episode(args, edited)
    return 0


def _unarchive(args: argparse.Namespace) -> int:
    from episeg.interfaces.runtime import open_memory

    memory = open_memory(args.path, chroma_url=args.chroma_url)
    try:
        episode = memory.unarchive(args.user, args.episode_id)
    finally:
        memory.close()
    _print_episode(args, episode)
    return 0


def _tenants(args: argparse.Namespace) -> int:
    from episeg.interfaces.runtime import open_backend

    names = open_backend(args.path, args.chroma_url).tenants()
    print(json.dumps({"tenants": names}, ensure_ascii=False) if args.json else "\n".join(names))
    return 0


EDIT: dict[str, Callable[[argparse.Namespace], int]] = {
    "episode": _episode,
    "edit": _edit,
    "unarchive": _unarchive,
    "tenants": _tenants,
}
