"""``python -m episeg.evaluation``: see :func:`episeg.evaluation.runner.main`.

A malformed data file (or another :class:`~episeg.errors.EpisegError`) is
named on stderr with exit status 2, as ``episeg eval`` does, not a traceback.
"""

import sys

from episeg.errors import EpisegError
from episeg.evaluation.runner import main

if __name__ == "__main__":
    try:
        status = main()
    except EpisegError as exc:
        print(f"episeg eval: error: {exc}", file=sys.stderr)
        status = 2
    raise SystemExit(status)
