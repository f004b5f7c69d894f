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
>>> _num("forgetting", "growth_days", float("inf"), 0.0)
Traceback (most recent call last):
...
episeg.errors.ConfigError: forgetting.growth_days must be a finite number >= 0, got inf
>>> _triple("recall", "weights", "123")
Traceback (most recent call last):
...
episeg.errors.ConfigError: recall.weights must be 3 finite non-negative numbers, got '123'
"""

from __future__ import annotations

import dataclasses
import math
import numbers
from collections.abc import Mapping
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
    ok = _finite(value)
    if ok:
        ok = (value > low if low_open else value >= low) and (
            value < high if high_open else value <= high
        )
    if not ok:
        if math.isinf(high):
            bound = "" if math.isinf(low) else f" {'>' if low_open else '>='} {low:g}"
            rule = f"a finite number{bound}" if bound == "" or not _finite(value) else bound[1:]
        else:
            rule = f"in {'(' if low_open else '['}{low:g}, {high:g}{')' if high_open else ']'}"
        raise _fail(section, name, rule, value)


def _finite(value: Any, kinds: type | tuple[type, ...] = (int, float)) -> bool:
    """Whether ``value`` is a finite number of ``kinds`` (a bool is not a number)."""
    if isinstance(value, bool) or not isinstance(value, kinds):
        return False
    number: Any = value  # numbers.Real narrows to object
    try:
        return math.isfinite(number)
    except OverflowError:  # an int beyond float's range
        return False


def _triple(section: str, name: str, value: Any) -> tuple[float, float, float]:
    """Three finite real numbers >= 0 (numpy's too) in a sequence; not a string nor a mapping."""
    items = () if isinstance(value, str | bytes | Mapping) else value
    try:
        triple = tuple(items)
    except TypeError:
        triple = ()
    if len(triple) != 3 or not all(_finite(v, numbers.Real) and v >= 0 for v in triple):
        raise _fail(section, name, "3 finite non-negative numbers", value)
    return float(triple[0]), float(triple[1]), float(triple[2])


class _Section:
    """What every section shares: its name and its fields as constructor keywords."""

    section: ClassVar[str]

    def kwargs(self) -> dict[str, Any]:
        """The fields as keyword arguments for the component this section configures."""
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}  # type: ignore[arg-type]
