"""Export (once) and check the default ONNX encoder; print where it is cached.

``python -m episeg.embedders`` is what ``./run.sh setup`` runs after installing,
so the first real use does not pay the export (~15 s); it needs no network.
Options: ``--int8`` prepares the int8-quantised variant as well.
"""

from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import Sequence

from episeg.embedders._onnx import OnnxMiniLMEmbedder


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m episeg.embedders", description=__doc__)
    parser.add_argument("--int8", action="store_true", help="also the int8-quantised model")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="episeg: %(message)s")
    for quantize in (False, True) if args.int8 else (False,):
        embedder = OnnxMiniLMEmbedder(quantize=quantize)
        print(embedder.cache_path)
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
