"""OpenAI Agents SDK input items as episeg turns (:func:`item_to_turn`).

Every item kind of the Responses input-item union the SDK stores is mapped:

- ``message`` of the ``user`` or ``assistant`` role: a turn of that actor; the
  text is the string content or the ``text`` of its parts, a ``refusal`` part
  being text too (a refusal is the assistant's answer);
- a tool's call (``function_call``, ``custom_tool_call``, ``shell_call``,
  ``local_shell_call``, ``apply_patch_call``, ``computer_call``,
  ``web_search_call``, ``file_search_call``, ``code_interpreter_call``,
  ``image_generation_call``, ``tool_search_call``, ``mcp_call``,
  ``mcp_approval_request``, ``program``): a ``tool`` turn ``name(arguments)``
  typed ``tool-call``, or, when the item also carries its result (hosted
  tools: ``mcp_call``'s ``output``, ``file_search_call``'s ``results``,
  ``code_interpreter_call``'s ``outputs``), the call and the result in one
  untyped ``tool`` turn;
- a tool's output (``*_call_output``, ``program_output``,
  ``mcp_approval_response``): an untyped ``tool`` turn (episeg infers success
  or error from the text), typed ``tool-error`` only when the item says it
  failed (``status`` ``failed``/``incomplete``, an ``error``, a shell command's
  non-zero exit or timeout). A type is never guessed as ``tool-success``.

Items with no conversational content are not turns, each logged at debug level:
system and developer messages (instructions, injected memories), ``reasoning``,
``compaction``/``compaction_trigger``, ``item_reference``, ``additional_tools``,
``configuration_update``, ``mcp_list_tools``, ``tool_search_output`` (tool
definitions) and a computer call's output (a screenshot). An item kind this
module does not know is logged at info level once per kind and not observed.

>>> item_to_turn({"type": "shell_call_output", "output": [{"stdout": "disk full",
...               "outcome": {"type": "exit", "exit_code": 1}}]},
...              user="u", session="s", ts=1.0).type.value
'tool-error'
"""

from __future__ import annotations

import dataclasses
import json
import logging
import re
from typing import Any

from episeg.types import Actor, Turn, TurnType

__all__ = ["clip_turn", "item_to_turn", "text_of"]

_CLIPPED = "[episeg: item {item} clipped, {total} characters; the first {kept} are kept above]"
log = logging.getLogger("episeg.adapters.openai_agents")
_SURROGATE = re.compile("[\ud800-\udfff]")  # not text: no UTF-8 store can hold one

#: item kinds that carry no conversation (logged at debug level, not observed)
NOT_CONVERSATION = frozenset(
    {
        "reasoning",
        "compaction",
        "compaction_trigger",
        "item_reference",
        "additional_tools",
        "configuration_update",
        "mcp_list_tools",
        "tool_search_output",
        "computer_call_output",
    }
)
#: call kinds: (tool name when the item has none, the fields holding its arguments)
CALLS: dict[str, tuple[str, tuple[str, ...]]] = {
    "function_call": ("tool", ("arguments",)),
    "custom_tool_call": ("tool", ("input",)),
    "shell_call": ("shell", ("action",)),
    "local_shell_call": ("local_shell", ("action",)),
    "apply_patch_call": ("apply_patch", ("operation",)),
    "computer_call": ("computer", ("action", "actions")),
    "web_search_call": ("web_search", ("action",)),
    "file_search_call": ("file_search", ("queries",)),
    "code_interpreter_call": ("code_interpreter", ("code",)),
    "image_generation_call": ("image_generation", ("revised_prompt",)),
    "tool_search_call": ("tool_search", ("arguments",)),
    "mcp_call": ("mcp", ("arguments",)),
    "mcp_approval_request": ("mcp_approval_request", ("arguments",)),
    "program": ("program", ("code",)),
}
#: fields of a call item that hold its result (the item is then one untyped turn)
RESULTS = ("output", "results", "outputs")
OUTPUTS = frozenset(
    {
        "function_call_output",
        "custom_tool_call_output",
        "shell_call_output",
        "local_shell_call_output",
        "apply_patch_call_output",
        "program_output",
        "mcp_approval_response",
    }
)
_FAILED = frozenset({"failed", "incomplete"})
_unknown_logged: set[str] = set()


def text_of(content: Any) -> str:
    """The text of a message's content or a tool's output (parts joined by newlines)."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [text_of(p) for p in content]
        return "\n".join(p for p in parts if p)
    if isinstance(content, dict):
        for field in ("text", "refusal", "stdout", "logs", "result", "output"):
            if isinstance(content.get(field), str) and content[field]:
                extra = content.get("stderr") if field == "stdout" else None
                return f"{content[field]}\n{extra}" if extra else str(content[field])
        if isinstance(content.get("stderr"), str):
            return str(content["stderr"])
        return ""
    return str(content)


def _json(value: Any) -> str:
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)


def _failed(item: dict[str, Any]) -> bool:
    if item.get("status") in _FAILED or item.get("error"):
        return True
    output = item.get("output")
    for part in output if isinstance(output, list) else []:
        outcome = part.get("outcome") if isinstance(part, dict) else None
        if isinstance(outcome, dict) and (
            outcome.get("type") == "timeout" or outcome.get("exit_code") not in (None, 0)
        ):
            return True
    return False


def _call(item: dict[str, Any], kind: str) -> tuple[str, TurnType | None]:
    default, fields = CALLS[kind]
    name = str(item.get("name") or default)
    if kind == "mcp_call" and item.get("server_label"):
        name = f"{item['server_label']}.{name}"
    args = next((item[f] for f in fields if item.get(f) is not None), "")
    text = f"{name}({_json(args)})"
    result = "\n".join(text_of(item.get(f)) for f in RESULTS if item.get(f) is not None)
    error = text_of(item.get("error"))
    if not result.strip() and not error:
        return text, TurnType.TOOL_ERROR if _failed(item) else TurnType.TOOL_CALL
    text = "\n".join(p for p in (text, result.strip(), error) if p)
    return text, TurnType.TOOL_ERROR if _failed(item) else None


def _output(item: dict[str, Any], kind: str) -> str:
    if kind == "mcp_approval_response":
        verdict = "approved" if item.get("approve") else "denied"
        reason = f": {item['reason']}" if item.get("reason") else ""
        return f"mcp approval {verdict}{reason}"
    return text_of(item.get("output", item.get("result")))


def item_to_turn(item: Any, *, user: str, session: str, ts: float) -> Turn | None:
    """The episeg turn for one SDK input item, or ``None`` for items that are not turns.

    >>> item_to_turn({"type": "function_call", "name": "ls", "arguments": "{}"},
    ...              user="u", session="s", ts=1.0).text
    'ls({})'
    >>> item_to_turn({"role": "developer", "content": "be brief"}, user="u", session="s", ts=1.0)
    """
    if not isinstance(item, dict):
        log.info("session %s of %s: an item that is not a dict is not observed", session, user)
        return None
    kind, role = item.get("type", "message"), item.get("role")
    turn_type: TurnType | None = None
    if kind == "message":
        if role not in ("user", "assistant"):
            log.debug("session %s: a %s message is context, not a turn", session, role)
            return None
        actor, text = Actor.parse(role), text_of(item.get("content"))
    elif kind in CALLS:
        actor, (text, turn_type) = Actor.TOOL, _call(item, kind)
    elif kind in OUTPUTS:
        actor, text = Actor.TOOL, _output(item, kind)
        turn_type = TurnType.TOOL_ERROR if _failed(item) else None
    else:
        if kind in NOT_CONVERSATION:
            log.debug("session %s: a %s item carries no conversation, not observed", session, kind)
        elif kind not in _unknown_logged:
            _unknown_logged.add(str(kind))
            log.info("session %s: item type %r is not known to episeg, not observed", session, kind)
        return None
    if not text.strip():
        log.debug("session %s: a %s item without text is not observed", session, kind)
        return None
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:  # e.g. a file name os.listdir decoded with surrogateescape
        log.warning(
            "session %s of %s: a %s item's text holds lone surrogates; episeg keeps it with "
            "U+FFFD in their place (the session history keeps it as sent)",
            session,
            user,
            kind,
        )
        text = _SURROGATE.sub("\ufffd", text)
    return Turn(actor=actor, text=text, ts=ts, type=turn_type, user=user, session=session)


def clip_turn(turn: Turn, limit: int, *, item: int = 0) -> Turn:
    """``turn``, or its first characters and a marker if its text is over ``limit`` (logged).

    >>> clipped = clip_turn(Turn(actor="tool", text="x" * 500, ts=1.0), 200)
    >>> len(clipped.text) <= 200, clipped.text.splitlines()[-1]
    (True, '[episeg: item 0 clipped, 500 characters; the first 129 are kept above]')
    """
    if len(turn.text) <= limit:
        return turn
    marker = _CLIPPED.format(item=item, total=len(turn.text), kept=limit)
    kept = max(0, limit - len(marker) - 1)
    marker = _CLIPPED.format(item=item, total=len(turn.text), kept=kept)
    log.warning(
        "session %s of %s: item %d has %d characters, over max_turn_chars=%d; "
        "episeg keeps its first %d (the session history keeps it whole)",
        turn.session,
        turn.user,
        item,
        len(turn.text),
        limit,
        kept,
    )
    return dataclasses.replace(turn, text=f"{turn.text[:kept]}\n{marker}")
