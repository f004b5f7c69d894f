"""Benchmarks: segmentation speed against raw embedding throughput, recall latency.

Run them as modules (``python -m episeg.benchmarks.segment_bench``,
``python -m episeg.benchmarks.recall_bench``) or through ``episeg bench``.
"""
