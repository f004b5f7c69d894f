"""What every configuration section shares: bound checks and ``kwargs()``.

The checks raise :class:`~episeg.errors.ConfigError` naming the section and
field, so a bad value is reported where it was given.

>>> _num("semantic", "threshold", 2.5, 0.0, 2.0, low_open=True)
Traceback (most recent call last):
...
episeg.errors.ConfigError: semantic.threshold must be in (0, 2], got 2.5
>>> _int("judge", "every", -1, low=0)
Traceback (most recent call last):
...
episeg.errors.ConfigError: judge.every must be an integer >= 0, got -1
"""

from __future__ import annotations

import dataclasses
from typing import Any, ClassVar

from episeg.errors import ConfigError

__all__ = ["_Section", "_fail", "_int", "_num", "_triple"]


def _fail(section: str, name: str, rule: str, value: object) -> ConfigError:
    return ConfigError(f"{section}.{name} must be {rule}, got {value!r}")


def _int(section: str, name: str, value: object, *, low: int = 1) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < low:
        rule = "a positive integer" if low == 1 else f"an integer >= {low}"
        raise _fail(section, name, rule, value)


def _num(
    section: str,
    name: str,
    value: Any,
    low: float,
    high: float = float("inf"),
    *,
    low_open: bool = False,
    high_open: bool = False,
) -> None:
    ok = isinstance(value, int | float) and not isinstance(value, bool)
    if ok:
        ok = (value > low if low_open else value >= low) and (
            value < high if high_open else value <= high
        )
    if not ok:
        if high == float("inf"):
            rule = f"{'>' if low_open else '>='} {low:g}"
        else:
            rule = f"in {'(' if low_open else '['}{low:g}, {high:g}{')' if high_open else ']'}"
        raise _fail(section, name, rule, value)


def _triple(section: str, name: str, value: Any) -> tuple[float, float, float]:
    try:
        triple = tuple(float(v) for v in value)
    except (TypeError, ValueError):
        triple = ()
    if len(triple) != 3 or any(not v >= 0 for v in triple):
        raise _fail(section, name, "3 non-negative numbers", value)
    return triple[0], triple[1], triple[2]


class _Section:
    """What every section shares: its name and its fields as constructor keywords."""

    section: ClassVar[str]

    def kwargs(self) -> dict[str, Any]:
        """The fields as keyword arguments for the component this section configures."""
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}  # type: ignore[arg-type]
