"""Interfaces: the ways in from outside, holding no segmentation or recall logic.

``cli`` (+ ``cli_commands``), ``service`` (HTTP, + ``service_auth``),
``mcp_server``, ``demo``, ``report`` (HTML timeline), ``views`` (one rendering of
episodes for all of them), ``transcript`` (JSONL turns in and out), ``progress``
and ``runtime`` (build a :class:`~episeg.memory.Memory` for an interface).
Nothing is imported here, so each interface loads only what it needs.
"""
