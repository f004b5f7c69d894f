"""``python -m episeg.evaluation``: see :func:`episeg.evaluation.runner.main`."""

from episeg.evaluation.runner import main

if __name__ == "__main__":
    raise SystemExit(main())
