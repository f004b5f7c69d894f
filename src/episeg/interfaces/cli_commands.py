"""The ``episeg`` subcommands: thin adapters from parsed arguments to :class:`Memory`.

Each command takes the ``argparse.Namespace`` built by :mod:`episeg.interfaces.cli` and
returns an exit code; errors propagate as :class:`EpisegError` for ``main``
to map to exit codes.

>>> sorted(COMMANDS)[:4]
['bench', 'calibration', 'episodes', 'eval']
"""

from __future__ import annotations

import argparse
import importlib
import json
import logging
import math
import os
import sys
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from episeg.errors import ConfigError, EpisegError
from episeg.interfaces import cli_ingest
from episeg.interfaces.cli_edit import parse_meta
from episeg.interfaces.runtime import all_episodes, open_backend, open_memory
from episeg.interfaces.views import episode_lines, episode_view, salience_text, scored_view
from episeg.memory import Memory
from episeg.store.chroma import ChromaEpisodeStore
from episeg.store.tenants import validate_tenant

log = logging.getLogger("episeg.cli")

__all__ = ["COMMANDS"]


def _memory(args: argparse.Namespace) -> Memory:
    return open_memory(args.path, chroma_url=args.chroma_url)


def _store(args: argparse.Namespace) -> ChromaEpisodeStore:
    """``--user``'s store alone, for read-only commands: no model loaded, no journal taken.

    So ``episodes`` and ``calibration`` start in a fraction of a second and can
    read a store whose journal a running service holds.
    """
    return open_backend(args.path, args.chroma_url).store_for(validate_tenant(args.user))


def _emit(args: argparse.Namespace, data: Any, text: str) -> None:
    if args.json:
        json.dump(data, sys.stdout, ensure_ascii=False, indent=2)
        sys.stdout.write("\n")
    else:
        sys.stdout.write(text + ("\n" if text and not text.endswith("\n") else ""))


def cmd_ingest(args: argparse.Namespace) -> int:
    """Stream a transcript into memory (:mod:`episeg.interfaces.cli_ingest`)."""
    return cli_ingest.cmd_ingest(args, _emit, _memory)


def cmd_episodes(args: argparse.Namespace) -> int:
    """List a tenant's episodes (sorted by session, then time)."""
    if args.limit < 1 or args.offset < 0:
        raise ConfigError(f"need --limit >= 1 and --offset >= 0, got {args.limit}, {args.offset}")
    page = _store(args).list_episodes(
        limit=args.limit, offset=args.offset, include_archived=args.archived
    )
    page.sort(key=lambda e: (e.session, e.opened_at, e.closed_at))
    lines = [f"{len(page)} episodes of {args.user!r}"]
    for number, ep in enumerate(page, start=args.offset + 1):
        lines += episode_lines(number, ep, turns=args.turns)
    _emit(args, [episode_view(e, with_turns=args.turns) for e in page], "\n".join(lines))
    return 0


def cmd_recall(args: argparse.Namespace) -> int:
    """Recall: each hit's dates, summary, score terms and matching turns (nothing is written)."""
    if args.k < 1:
        raise ConfigError(f"--k must be >= 1, got {args.k}")
    for flag in ("max_words",):
        if getattr(args, flag) is not None and getattr(args, flag) < 1:
            raise ConfigError(f"--{flag.replace('_', '-')} must be >= 1")
    if args.context < 0 or args.neighbours < 0 or not math.isfinite(args.min_score or 0.0):
        raise ConfigError("--context and --neighbours must be >= 0, --min-score finite")
    hits = _memory(args).recall(
        args.user,
        args.query,
        k=args.k,
        max_words=args.max_words,
        since=_time_arg(args.since, "--since"),
        until=_time_arg(args.until, "--until"),
        session=args.session,
        expand=args.expand,
        context=args.context,
        neighbours=args.neighbours,
        metadata=parse_meta(args.meta) if args.meta else None,
        min_score=args.min_score,
    )
    lines = [f"recall({args.user!r}, {args.query!r}): {len(hits)} episodes"]
    for rank, hit in enumerate(hits, start=1):
        ep = hit.episode
        lines.append(
            f"{rank}. {ep.id} {ep.start} .. {ep.end}  score {hit.score:.3f} = relevance "
            f"{hit.similarity:.3f} + recency {hit.recency:.3f} + importance "
            f"{hit.importance:.3f}{' (imputed)' if hit.importance_imputed else ''} "
            f"(best cosine {hit.raw_similarity:.3f})"
        )
        lines.append(
            f"   salience {salience_text(ep.salience)}, used {ep.recall_count}x: {ep.summary}"
        )
        for turn in getattr(hit, "turns", ()):
            lines.append(f"   - [{turn.id}] {turn.actor.value}: {turn.text}")
    _emit(args, [scored_view(h) for h in hits], "\n".join(lines))
    return 0


def cmd_used(args: argparse.Namespace) -> int:
    """Confirm that recalled episodes were used: they are reinforced (strength grows)."""
    updated = _memory(args).confirm_used(args.user, args.episode_ids)
    lines = [f"{ep.id}: used {ep.recall_count}x, strength {ep.strength:g} days" for ep in updated]
    _emit(args, [episode_view(ep, with_turns=False) for ep in updated], "\n".join(lines))
    return 0


def _time_arg(value: str | None, flag: str) -> float | None:
    """An ISO date/time (UTC unless it says otherwise) or seconds since the epoch."""
    if value is None:
        return None
    try:
        seconds = float(value)
    except ValueError:
        pass
    else:
        if not math.isfinite(seconds):
            raise ConfigError(f"{flag} must be a finite time, got {value!r}")
        return seconds
    try:
        when = datetime.fromisoformat(value)
    except ValueError:
        raise ConfigError(f"{flag} must be an ISO date/time or seconds, got {value!r}") from None
    return (when if when.tzinfo else when.replace(tzinfo=UTC)).timestamp()


def cmd_maintain(args: argparse.Namespace) -> int:
    """Decay never-recalled episodes; ``--archive`` hides faded ones from recall."""
    import dataclasses

    report = _memory(args).maintain(args.user, archive=args.archive)
    data = dataclasses.asdict(report)
    text = f"maintenance of {args.user!r}: " + ", ".join(
        f"{k} {v:.3f}" if isinstance(v, float) else f"{k} {v}" for k, v in data.items()
    )
    _emit(args, data, text)
    return 0


def cmd_calibration(args: argparse.Namespace) -> int:
    """Salience histogram over all of a tenant's episodes (archived included)."""
    try:
        from episeg.salience.calibration import calibration_report
    except ImportError as exc:
        raise ConfigError(f"salience calibration is not available: {exc}") from None
    eps = list(all_episodes(_store(args), include_archived=True))
    report = calibration_report(e.salience for e in eps if e.salience is not None)
    _emit(args, report.to_dict(), report.render())
    return 0


def cmd_report(args: argparse.Namespace) -> int:
    """Write the HTML timeline of a transcript's segmentation."""
    return cli_ingest.cmd_report(args, _emit)


def cmd_serve(args: argparse.Namespace) -> int:
    """Run the HTTP service until interrupted."""
    from episeg.interfaces.service import KeyRing, serve

    if not 1 <= args.port <= 65535:
        raise ConfigError(f"--port must be 1-65535, got {args.port}")
    if args.max_body < 1:
        raise ConfigError(f"--max-body must be >= 1 byte, got {args.max_body}")
    keys_file = args.keys_file or os.environ.get("EPISEG_KEYS_FILE")
    if not keys_file:
        raise ConfigError("serve needs --keys-file or EPISEG_KEYS_FILE (JSON {key: tenant})")
    keys = KeyRing.from_file(keys_file)
    shared = keys.shared_tenants()
    if shared and args.chroma_url:  # replicas behind a proxy that hashes the key
        log.warning(
            "tenants with several keys (%s) may be served by two replicas at once: a proxy "
            "routes by key, so give each tenant one key when scaling out (docs/DEPLOYMENT.md)",
            ", ".join(shared[:10]),
        )
    if args.max_tenant_requests < 1:
        raise ConfigError(f"--max-tenant-requests must be >= 1, got {args.max_tenant_requests}")
    serve(
        _memory(args),
        keys,
        host=args.host,
        port=args.port,
        max_body_bytes=args.max_body,
        max_tenant_requests=args.max_tenant_requests,
    )
    return 0


def cmd_mcp(args: argparse.Namespace) -> int:
    """Run the MCP stdio server bound to ``--user``."""
    from episeg.interfaces.mcp_server import run_stdio

    run_stdio(_memory(args), args.user)
    return 0


def _delegate(module_name: str) -> Callable[[argparse.Namespace], int]:
    def run(args: argparse.Namespace) -> int:
        """Import ``module_name`` lazily and call its ``main(argv)``."""
        try:
            module = importlib.import_module(module_name)
        except ImportError as exc:
            raise EpisegError(f"{module_name} is not installed ({exc})") from None
        entry = getattr(module, "main", None)
        if not callable(entry):
            raise EpisegError(f"{module_name} has no main(argv) entry point yet")
        rest = list(args.rest[1:] if args.rest[:1] == ["--"] else args.rest)
        return int(entry(rest) or 0)

    return run


COMMANDS: dict[str, Callable[[argparse.Namespace], int]] = {
    "bench": _delegate("episeg.benchmarks"),
    "calibration": cmd_calibration,
    "episodes": cmd_episodes,
    "eval": _delegate("episeg.evaluation"),
    "ingest": cmd_ingest,
    "maintain": cmd_maintain,
    "mcp": cmd_mcp,
    "recall": cmd_recall,
    "report": cmd_report,
    "serve": cmd_serve,
    "train": _delegate("episeg.evaluation.train_segmenter"),
    "used": cmd_used,
}
