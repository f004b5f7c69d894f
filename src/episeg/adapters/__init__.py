"""Adapters that plug episeg into agent frameworks (each needs its extra installed).

``episeg.adapters.langgraph_store.EpisegStore``
    A LangGraph ``BaseStore`` (``pip install 'episeg[langgraph]'``).
``episeg.adapters.openai_agents.EpisegSession``
    An OpenAI Agents SDK session (``pip install 'episeg[openai-agents]'``).

The modules import their framework at import time, so import the one you use.
"""

__all__: list[str] = []
