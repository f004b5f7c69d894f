"""Tenant ids and the Chroma collection names derived from them.

A tenant id is any string of 1-256 characters with no control or format
characters (Unicode categories ``Cc``/``Cf``/``Zl``/``Zp``) and no leading or
trailing whitespace. Ids are case-sensitive and compared exactly:
``"Alice"`` and ``"alice"`` are two tenants (normalise before calling if that
is not what you want). The collection name is ``ep_`` + the first 40 hex
digits of SHA-256 of the UTF-8 id, so ``/``, ``..`` or any other character in
an id can never address another collection.

>>> from episeg.store.tenants import collection_name, validate_tenant
>>> collection_name("alice")
'ep_2bd806c97f0e00af1a1fc3328fa763a9269723c8'
>>> collection_name("Alice") == collection_name("alice")
False
>>> validate_tenant(" alice")
Traceback (most recent call last):
...
episeg.errors.TenantError: tenant id must not start or end with whitespace, got ' alice'
"""

from __future__ import annotations

import hashlib
import unicodedata

from episeg.errors import TenantError

__all__ = ["MAX_TENANT_LENGTH", "collection_name", "validate_tenant"]

MAX_TENANT_LENGTH = 256
_FORBIDDEN_CATEGORIES = frozenset({"Cc", "Cf", "Zl", "Zp", "Cs"})


def validate_tenant(tenant: object) -> str:
    """Return ``tenant`` unchanged if it is a valid tenant id.

    Raises
    ------
    TenantError
        If it is not a string, empty, longer than :data:`MAX_TENANT_LENGTH`,
        padded with whitespace or contains control/format characters.
    """
    if not isinstance(tenant, str):
        raise TenantError(f"tenant id must be a string, got {type(tenant).__name__}")
    if not tenant:
        raise TenantError("tenant id must not be empty")
    if len(tenant) > MAX_TENANT_LENGTH:
        raise TenantError(
            f"tenant id must be at most {MAX_TENANT_LENGTH} characters, got {len(tenant)}"
        )
    if tenant != tenant.strip():
        raise TenantError(f"tenant id must not start or end with whitespace, got {tenant!r}")
    for ch in tenant:
        if unicodedata.category(ch) in _FORBIDDEN_CATEGORIES:
            raise TenantError(f"tenant id contains control character {ch!r}")
    return tenant


def collection_name(tenant: str) -> str:
    """The Chroma collection that holds ``tenant``'s episodes (validates first)."""
    digest = hashlib.sha256(validate_tenant(tenant).encode("utf-8")).hexdigest()
    return "ep_" + digest[:40]
