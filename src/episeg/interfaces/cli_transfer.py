"""CLI commands that move a tenant's memory: ``episeg export`` and ``episeg import``.

``episeg export --user U [--out FILE]`` writes U's episodes (archived too) in
the JSONL export format (:mod:`episeg.store.portability`) to stdout or FILE.
It reads the store only, like ``episodes``: no model is loaded and no journal
taken, so it starts at once and works beside a running service. The header
names the bundled embedder (the one every interface uses) and the stored
vectors' dimension. ``--out`` writes ``FILE.partial`` and renames it when
complete, so FILE is never half a file.

``episeg import --user U FILE|-`` imports such a file into U's memory (the
file's own tenant is ignored), all or nothing: a malformed line, another
embedder, or an id stored with other content exits 2 and writes nothing; a
file imported twice changes nothing the second time. Import writes, so like
``ingest`` it opens the memory (and its journal): against a running service,
use ``POST /v1/import`` instead.

>>> import argparse
>>> sub = argparse.ArgumentParser(prog="episeg").add_subparsers(dest="command")
>>> add_parsers(sub, [])
>>> sorted(TRANSFER)
['export', 'import']
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any

__all__ = ["TRANSFER", "add_parsers"]


def add_parsers(sub: Any, parents: Sequence[argparse.ArgumentParser]) -> None:
    """Add ``export`` and ``import`` to the ``episeg`` subparsers ``sub``."""
    p = sub.add_parser(
        "export",
        parents=list(parents),
        help="write a user's episodes as JSONL (read-only: no model, works beside a service)",
    )
    p.add_argument("--user", required=True, help="tenant (user) whose episodes to export")
    p.add_argument("--out", metavar="FILE", help="write to FILE instead of stdout")
    p = sub.add_parser(
        "import",
        parents=list(parents),
        help="import an export file into a user's memory, all or nothing",
    )
    p.add_argument("--user", required=True, help="tenant (user) the episodes go to")
    p.add_argument("file", help="an `episeg export` JSONL file, or - for stdin")
    if not parents:  # the doctest builds the parsers alone
        for name in ("export", "import"):
            sub.choices[name].add_argument("--path", default=".episeg")
            sub.choices[name].add_argument("--chroma-url")
            sub.choices[name].add_argument("--json", action="store_true")


@contextmanager
def _target(out: str | None) -> Iterator[IO[str]]:
    if out is None:
        yield sys.stdout
        return
    final = Path(out)
    partial = final.with_name(final.name + ".partial")
    try:
        with partial.open("w", encoding="utf-8", newline="\n") as handle:
            yield handle
        os.replace(partial, final)
    finally:
        partial.unlink(missing_ok=True)


def _export(args: argparse.Namespace) -> int:
    from episeg.embedders import OnnxMiniLMEmbedder
    from episeg.interfaces.runtime import open_backend
    from episeg.store.tenants import validate_tenant
    from episeg.store.transfer import export_lines

    store = open_backend(args.path, args.chroma_url).store_for(validate_tenant(args.user))
    count = -2  # header and trailer
    with _target(args.out) as handle:
        for line in export_lines(store, embedder_name=OnnxMiniLMEmbedder.name):
            handle.write(line)
            count += 1
    if args.out is not None:
        summary = {"user": args.user, "episodes": count, "out": args.out}
        text = f"exported {count} episode(s) of {args.user} to {args.out}"
        print(json.dumps(summary, ensure_ascii=False) if args.json else text)
    return 0


@contextmanager
def _source(name: str) -> Iterator[IO[bytes]]:
    if name == "-":
        yield sys.stdin.buffer
        return
    with open(name, "rb") as handle:
        yield handle


def _import(args: argparse.Namespace) -> int:
    from episeg.interfaces.runtime import open_memory

    memory = open_memory(args.path, chroma_url=args.chroma_url)
    try:
        with _source(args.file) as handle:
            report = memory.import_episodes(args.user, handle)
    finally:
        memory.close()
    if args.json:
        print(json.dumps({"user": args.user, **report.to_dict()}, ensure_ascii=False))
    else:
        print(
            f"imported {len(report.imported)} episode(s) into {args.user} "
            f"({len(report.unchanged)} already there, unchanged)"
        )
    return 0


TRANSFER: dict[str, Callable[[argparse.Namespace], int]] = {
    "export": _export,
    "import": _import,
}
