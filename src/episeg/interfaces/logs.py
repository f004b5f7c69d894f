"""Logging set-up for the CLI and the service: plain lines or JSON (one object per record).

JSON records come from python-json-logger and carry ``time``, ``level``,
``logger`` and ``message`` plus any ``extra=`` fields, so a log shipper can
index them without parsing. ``episeg --log-format json serve ...`` turns it on
(uvicorn's own loggers propagate to the same handler).

>>> import io, json, logging
>>> stream = io.StringIO()
>>> configure_logging(logging.INFO, json=True, stream=stream)
>>> logging.getLogger("episeg.demo").info("closed", extra={"episode": "e1"})
>>> record = json.loads(stream.getvalue())
>>> record["level"], record["logger"], record["message"], record["episode"]
('INFO', 'episeg.demo', 'closed', 'e1')
>>> logging.getLogger("uvicorn.error").info("up", extra={"color_message": "\x1b[36mup"})
>>> "color_message" in stream.getvalue().splitlines()[-1]
False
>>> configure_logging(logging.WARNING)
"""

from __future__ import annotations

import logging
import sys
from typing import TextIO

from episeg.errors import ConfigError

__all__ = ["LOG_FORMATS", "configure_logging"]

LOG_FORMATS = ("text", "json")


def _drop_color(record: logging.LogRecord) -> bool:
    """uvicorn adds ``color_message`` (ANSI escapes) to its records: not for JSON."""
    record.__dict__.pop("color_message", None)
    return True


def configure_logging(level: int, *, json: bool = False, stream: TextIO | None = None) -> None:
    """Send every log record at ``level`` or above to ``stream`` (default stderr).

    Replaces the root logger's handlers, so calling it twice does not double lines.
    ``json=True`` needs python-json-logger (the ``serve`` extra): a
    :class:`ConfigError` saying so when it is not installed.
    """
    handler = logging.StreamHandler(stream or sys.stderr)
    if json:
        try:
            from pythonjsonlogger.json import JsonFormatter  # the `serve` extra
        except ImportError:
            raise ConfigError(
                "--log-format json needs python-json-logger, in the serve extra: "
                "pip install 'episeg[serve]'"
            ) from None

        handler.setFormatter(
            JsonFormatter(
                "%(asctime)s %(levelname)s %(name)s %(message)s",
                rename_fields={"asctime": "time", "levelname": "level", "name": "logger"},
            )
        )
        handler.addFilter(_drop_color)
    else:
        handler.setFormatter(logging.Formatter("%(levelname)s %(name)s: %(message)s"))
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level)
