"""Wiring shared by the interfaces (CLI, HTTP service, MCP server): build a :class:`Memory`.

The interfaces hold no segmentation or recall logic; they only choose the
store (embedded folder or a ``chroma run`` server) and hand turns to
:class:`~episeg.memory.Memory`.

>>> parse_chroma_url("http://127.0.0.1:8123")
('127.0.0.1', 8123, False)
>>> parse_chroma_url("https://chroma.internal")
('chroma.internal', 443, True)
>>> parse_chroma_url("ftp://x")
Traceback (most recent call last):
...
episeg.errors.ConfigError: --chroma-url must look like http://host:port, got 'ftp://x'
"""

from __future__ import annotations

from collections.abc import Iterator
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from urllib.parse import urlsplit

from episeg import defaults
from episeg.config import EmbeddingConfig, EpisegConfig
from episeg.errors import ConfigError
from episeg.interfaces.settings import EpisegSettings, load_settings
from episeg.memory import Memory
from episeg.store import ChromaBackend
from episeg.types import Episode
from episeg.typing import Embedder, EpisodeStore

__all__ = ["all_episodes", "default_embedder", "open_backend", "open_memory", "parse_chroma_url"]

_PAGE = 500


def default_embedder(batch_size: int = 32) -> Embedder:
    """The bundled MiniLM, loaded once per process (:func:`episeg.defaults.default_embedder`)."""
    return defaults.default_embedder(EpisegConfig(embedding=EmbeddingConfig(batch_size=batch_size)))


def parse_chroma_url(url: str) -> tuple[str, int, bool]:
    """``(host, port, ssl)`` from ``http[s]://host[:port]`` (port 8000 / 443 by default)."""
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        parts, port = None, None
    if parts is None or parts.scheme not in ("http", "https") or not parts.hostname:
        raise ConfigError(f"--chroma-url must look like http://host:port, got {url!r}")
    ssl = parts.scheme == "https"
    return parts.hostname, port or (443 if ssl else 8000), ssl


def open_backend(
    path: str | Path, chroma_url: str | None, *, sync_threshold: int | None = None
) -> ChromaBackend:
    """An HTTP backend for ``chroma_url``, else an embedded store under ``path/chroma``.

    Its collections are made (and existing ones reconfigured) with
    ``sync_threshold`` (:class:`~episeg.config.StoreConfig`); ``None`` takes
    the settings' ``[store] sync_threshold`` (:func:`load_settings`), so every
    command opening the same store keeps the threshold the settings give.

    Raises
    ------
    StoreUnavailableError
        When the ``chroma run`` server does not answer.
    ConfigError
        For an invalid ``sync_threshold`` or invalid settings.
    """
    if sync_threshold is None:
        sync_threshold = load_settings().store.sync_threshold
    if chroma_url:
        host, port, ssl = parse_chroma_url(chroma_url)
        backend = ChromaBackend.http(host, port, ssl=ssl, sync_threshold=sync_threshold)
        backend.heartbeat()
        return backend
    folder = Path(path)
    folder.mkdir(parents=True, exist_ok=True)
    return ChromaBackend.persistent(folder / "chroma", sync_threshold=sync_threshold)


def open_memory(
    path: str | Path = ".episeg",
    *,
    chroma_url: str | None = None,
    embedder: Embedder | None = None,
    config: EpisegConfig | None = None,
    settings: EpisegSettings | None = None,
) -> Memory:
    """A :class:`Memory` with the chosen store and the judge, scorer and embedder backend of
    ``settings`` (default: :func:`~episeg.interfaces.settings.load_settings`, i.e. the
    environment and the TOML file; with neither, the offline stack of :mod:`episeg.defaults`).
    The store's collections get ``config.store.sync_threshold`` (``config`` defaults to
    ``settings.config()``, which carries ``[store] sync_threshold``).
    """
    settings = settings or load_settings()
    config = config or settings.config()
    return Memory(
        path=path,
        config=config,
        embedder=embedder,
        judge=settings.build_judge(),
        scorer=settings.build_scorer(),
        backend=open_backend(path, chroma_url, sync_threshold=config.store.sync_threshold),
    )


def all_episodes(store: EpisodeStore, *, include_archived: bool = False) -> Iterator[Episode]:
    """Every episode of ``store``'s tenant, page by page."""
    offset = 0
    while True:
        page = store.list_episodes(limit=_PAGE, offset=offset, include_archived=include_archived)
        yield from page
        if len(page) < _PAGE:
            return
        offset += len(page)


def package_version() -> str:
    """episeg's installed version, as the HTTP service and the MCP server report it.

    >>> package_version() != ""
    True
    """
    try:
        return version("episeg")
    except PackageNotFoundError:  # running from a source tree that is not installed
        return "0+unknown"
