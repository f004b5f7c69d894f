"""Anchor sets: the two concrete endpoints that pin the 1-10 salience scale.

Without anchors an LLM's importance ratings cluster at 6-8 and the rerank's
importance term becomes near-constant. Each set names both endpoints with
vivid examples (for the LLM prompt) and carries a few concrete example
episodes at 1 and at 10 (for the offline scorer, which embeds them).

>>> from episeg.salience import AnchorSet, anchor_set
>>> anchor_set("sre").high_label
'a critical production incident and its root cause'
>>> anchor_set("legal")
Traceback (most recent call last):
...
episeg.errors.ConfigError: unknown anchor set 'legal'; valid: coding, general, sre, or an AnchorSet
>>> custom = AnchorSet("support", "a greeting", "a churn-risk escalation",
...                    ("saying hello",), ("a customer threatening to cancel",))
>>> custom.low_episodes
('saying hello',)
"""

from __future__ import annotations

from dataclasses import dataclass

from episeg.errors import ConfigError

__all__ = ["ANCHOR_SETS", "AnchorSet", "anchor_set"]


@dataclass(frozen=True)
class AnchorSet:
    """Endpoint anchors for one domain.

    Parameters
    ----------
    name : str
        Short identifier, e.g. ``"coding"``.
    low_label, high_label : str
        What 1 and 10 mean ("purely mundane", "extremely poignant").
    low_examples, high_examples : tuple of str
        Short concrete examples named in the LLM prompt ("brushing teeth").
    low_episodes, high_episodes : tuple of str
        Example episode texts embedded by the offline scorer; when empty the
        examples are used instead (so a custom set needs only the five fields).

    A tuple (or list) of strings is due for each of the last four: one string
    is refused, not read as its letters.

    >>> AnchorSet("support", "a greeting", "an escalation", "hello", ("cancel",))
    Traceback (most recent call last):
    ...
    episeg.errors.ConfigError: anchor set low_examples must be a tuple of strings, got the str ...
    """

    name: str
    low_label: str
    high_label: str
    low_examples: tuple[str, ...]
    high_examples: tuple[str, ...]
    low_episodes: tuple[str, ...] = ()
    high_episodes: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        for field in ("name", "low_label", "high_label"):
            label = getattr(self, field)
            if not isinstance(label, str) or not label.strip():
                raise ConfigError(f"anchor set {field} must be a non-empty string, got {label!r}")
        for field in ("low_examples", "high_examples", "low_episodes", "high_episodes"):
            given = getattr(self, field)
            if not isinstance(given, tuple | list):
                raise ConfigError(
                    f"anchor set {field} must be a tuple of strings, got the "
                    f"{type(given).__name__} {given!r:.60}"
                )
            value = tuple(given)
            if any(not isinstance(v, str) or not v.strip() for v in value):
                raise ConfigError(f"anchor set {field} must hold non-empty strings")
            object.__setattr__(self, field, value)
        if not self.low_examples or not self.high_examples:
            raise ConfigError("an anchor set needs at least one low and one high example")
        if not self.low_episodes:
            object.__setattr__(self, "low_episodes", self.low_examples)
        if not self.high_episodes:
            object.__setattr__(self, "high_episodes", self.high_examples)

    def scale_text(self) -> str:
        """``"1 is <low> (e.g., a, b) and 10 is <high> (e.g., c, d)"``, the prompt's anchor."""
        return (
            f"1 is {self.low_label} (e.g., {', '.join(self.low_examples)}) and 10 is "
            f"{self.high_label} (e.g., {', '.join(self.high_examples)})"
        )


GENERAL = AnchorSet(
    "general",
    "purely mundane",
    "extremely poignant",
    ("brushing teeth", "making bed"),
    ("a break up", "college acceptance"),
    low_episodes=(
        "user: good morning! assistant: morning, how can I help? user: nothing, just saying hi",
        "user: I brushed my teeth and made my bed. assistant: nice routine.",
        "user: what time is it in London? assistant: it is 3 pm there.",
    ),
    high_episodes=(
        "user: my partner and I broke up last night after six years, I don't know what to do "
        "assistant: I'm so sorry, that is a huge loss; let's talk about what you need now",
        "user: I just got accepted to my dream college with a full scholarship! "
        "assistant: congratulations, this changes everything for your future",
        "user: our company lost all customer data in an outage and I have to explain it to "
        "the board tomorrow assistant: let's reconstruct what happened and the root cause",
    ),
)

CODING = AnchorSet(
    "coding",
    "a trivial syntax clarification or boilerplate",
    "the core algorithm of the system or a critical production fix",
    ("a boilerplate getter", "where the semicolon goes"),
    ("designing the core scheduling algorithm", "a critical production bug fix"),
    low_episodes=(
        "user: add a getter for the name field assistant: def get_name(self): return self.name",
        "user: does a python dict literal use colons or equals? assistant: colons",
        "user: rename the variable tmp to temp assistant: done, renamed in one place",
        "user: fix the typo in a comment assistant: corrected 'recieve' to 'receive'",
    ),
    high_episodes=(
        "user: production crashes corrupt user accounts; tool: traceback in the payment "
        "ledger; assistant: found the race condition in the ledger commit and fixed it",
        "user: let's design the core conflict-resolution algorithm of the sync engine "
        "assistant: we use vector clocks and a merge function that every replica applies",
    ),
)

SRE = AnchorSet(
    "sre",
    "a one-line clarifying question",
    "a critical production incident and its root cause",
    ("asking which dashboard to open", "a one-line clarifying question"),
    ("a full production outage root-caused", "a data-loss incident resolved"),
    low_episodes=(
        "user: which dashboard shows the request rate? assistant: the one named traffic",
        "user: is the staging cluster called stg-1? assistant: yes",
        "user: thanks, that's all for now assistant: you're welcome",
    ),
    high_episodes=(
        "user: production is down, every request returns 503 for all customers; tool: error "
        "database connection pool exhausted; assistant: root cause: a deploy removed the pool "
        "limit, rolled back, service restored, postmortem written",
        "user: we are losing data: the primary database failed over and replication lagged "
        "assistant: the incident root cause is a misconfigured failover; writes recovered",
    ),
)

ANCHOR_SETS: dict[str, AnchorSet] = {s.name: s for s in (GENERAL, CODING, SRE)}


def anchor_set(value: str | AnchorSet) -> AnchorSet:
    """The built-in set named ``value`` (general, coding, sre), or ``value`` itself."""
    if isinstance(value, AnchorSet):
        return value
    key = str(value).strip().lower()
    if key not in ANCHOR_SETS:
        valid = ", ".join(sorted(ANCHOR_SETS))
        raise ConfigError(f"unknown anchor set {value!r}; valid: {valid}, or an AnchorSet")
    return ANCHOR_SETS[key]
