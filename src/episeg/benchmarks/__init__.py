"""Benchmarks: segmentation speed against raw embedding throughput, recall latency, service load.

``episeg bench segment ...`` runs :mod:`episeg.benchmarks.segment_bench` and
``episeg bench recall ...`` runs :mod:`episeg.benchmarks.recall_bench` and
``episeg bench load ...`` runs :mod:`episeg.benchmarks.load_bench`,
``episeg bench proxy ...`` :mod:`episeg.benchmarks.proxy_bench` (replicas behind HAProxy),
``episeg bench sessions ...`` :mod:`episeg.benchmarks.sessions_bench` (memory per idle
session), ``episeg bench hierarchical ...`` runs
:mod:`episeg.benchmarks.hierarchical_bench` and ``episeg bench write ...``
:mod:`episeg.benchmarks.write_bench` (one write at scale per ``store.sync_threshold``);
the remaining arguments go to that module's ``main``.

>>> main(["nonsense"])
usage: episeg bench {segment,recall,load,hierarchical,proxy,sessions,write} [options] (see --help)
2
"""

from __future__ import annotations

import importlib
from collections.abc import Sequence

import numpy as np

__all__ = ["main", "percentiles_ms"]

_BENCHES = {
    "segment": "episeg.benchmarks.segment_bench",
    "recall": "episeg.benchmarks.recall_bench",
    "load": "episeg.benchmarks.load_bench",
    "hierarchical": "episeg.benchmarks.hierarchical_bench",
    "proxy": "episeg.benchmarks.proxy_bench",
    "sessions": "episeg.benchmarks.sessions_bench",
    "write": "episeg.benchmarks.write_bench",
}


def percentiles_ms(seconds: Sequence[float]) -> tuple[float, float]:
    """(p50, p99) in milliseconds of latency samples given in seconds.

    >>> [round(ms, 3) for ms in percentiles_ms([0.001, 0.002, 0.003])]
    [2.0, 2.98]
    """
    p50, p99 = np.percentile(np.asarray(seconds, dtype=float) * 1000.0, [50, 99])
    return float(p50), float(p99)


def main(argv: Sequence[str] | None = None) -> int:
    """Dispatch ``segment`` / ``recall`` / ``load`` to the benchmark modules."""
    args = list(argv or [])
    if not args or args[0] not in _BENCHES:
        print(f"usage: episeg bench {{{','.join(_BENCHES)}}} [options] (see --help)")
        return 2
    module = importlib.import_module(_BENCHES[args[0]])
    return int(module.main(args[1:]))
