"""``KEY=VALUE`` command-line overrides of :class:`~episeg.config.EpisegConfig` fields.

An evaluation command that takes ``--set recall.warm_cache=true`` runs with
that field changed and records the change in its output, so a figure measured
with a non-default setting is reproduced by the command alone. The key is a
section-qualified field name (:meth:`EpisegConfig.field_names`, or a mapping's
entry such as ``policy.weights.drift``); the value is read as JSON (``true``,
``100000``, ``0.5``, ``[1, 2]``, ``null``) and, if it is not JSON, taken as
the string it is (``judge.gate=periodic``). The section then validates it as
the constructor would, so a wrong type is a :class:`~episeg.errors.ConfigError`,
never a silent default.

>>> changes = parse_overrides(["recall.warm_cache=true", "recall.cache_episodes=100000"])
>>> changes
{'recall.warm_cache': True, 'recall.cache_episodes': 100000}
>>> EpisegConfig().with_overrides(**changes).recall.cache_episodes
100000
>>> parse_overrides(["judge.gate=periodic"])
{'judge.gate': 'periodic'}
>>> parse_overrides(["recall.warm_cache"])
Traceback (most recent call last):
...
episeg.errors.ConfigError: override 'recall.warm_cache' is not KEY=VALUE
>>> config_with(["recall.warm_cache=yes"])
Traceback (most recent call last):
...
episeg.errors.ConfigError: recall.warm_cache must be true or false, got 'yes'
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from episeg.config.episeg_config import EpisegConfig
from episeg.errors import ConfigError

__all__ = ["config_with", "key_and_value", "parse_overrides"]


def parse_overrides(pairs: Sequence[str]) -> dict[str, Any]:
    """``["section.field=value", ...]`` as the keyword arguments of ``with_overrides``.

    A key given twice keeps its last value, as a command line reads.
    """
    changes: dict[str, Any] = {}
    for pair in pairs:
        split = key_and_value(pair)
        if split is None or not split[0].strip():
            raise ConfigError(f"override {pair!r} is not KEY=VALUE")
        changes[split[0].strip()] = split[1]
    return changes


def key_and_value(pair: str) -> tuple[str, Any] | None:
    """``KEY=VALUE`` as ``(KEY, VALUE read as JSON, else the text itself)``; None without a key.

    ``NaN``, ``Infinity`` and ``-Infinity`` are not JSON (Python's reader takes
    them): they stay text, so ``--meta x=NaN`` stores the word.

    >>> key_and_value("a.b=0.5"), key_and_value("tag=blue"), key_and_value("=1")
    (('a.b', 0.5), ('tag', 'blue'), None)
    >>> key_and_value("x=NaN"), key_and_value("w=[Infinity, 0, 1]")
    (('x', 'NaN'), ('w', '[Infinity, 0, 1]'))
    """
    key, sep, raw = pair.partition("=")
    if not sep or not key:
        return None
    try:
        return key, json.loads(raw, parse_constant=_not_json)
    except ValueError:  # JSONDecodeError, or one of those constants
        return key, raw


def _not_json(constant: str) -> Any:
    raise ValueError(f"{constant} is not JSON")


def config_with(pairs: Sequence[str], base: EpisegConfig | None = None) -> EpisegConfig:
    """``base`` (default: every default) with ``pairs`` applied and validated."""
    return (base or EpisegConfig()).with_overrides(**parse_overrides(pairs))
