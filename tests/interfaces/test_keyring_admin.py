"""Admin keys in the keys file (episeg.interfaces.service_auth.KeyRing)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from episeg.errors import ConfigError
from episeg.interfaces.service_auth import KeyRing

ALICE = "k-alice-0123456789"
OPS = "k-ops-0123456789abcd"


def test_entries_as_tenant_or_object() -> None:
    ring = KeyRing(
        {
            ALICE: "alice",
            OPS: {"admin": True},
            "k-bob-admin-0123456": {"tenant": "bob", "admin": True},
        }
    )
    assert ring.tenant_for(ALICE) == "alice" and not ring.is_admin(ALICE)
    assert ring.tenant_for(OPS) is None and ring.is_admin(OPS)
    assert ring.tenant_for("k-bob-admin-0123456") == "bob" and ring.is_admin("k-bob-admin-0123456")
    assert not ring.is_admin("unknown-key-0123456789") and ring.tenants == {"alice", "bob"}
    assert "1 admin" not in repr(ring) and "2 admin" in repr(ring) and OPS not in repr(ring)


@pytest.mark.parametrize(
    "value",
    [
        {},
        {"admin": False},
        {"tenant": "alice", "role": "admin"},
        {"admin": "yes"},
        {"tenant": 3},
        ["alice"],
        7,
    ],
)
def test_malformed_entries_are_config_errors(value: object) -> None:
    with pytest.raises(ConfigError):
        KeyRing({ALICE: value})  # type: ignore[dict-item]


def test_from_file_reads_admin_keys(tmp_path: Path) -> None:
    path = tmp_path / "keys.json"
    path.write_text(json.dumps({ALICE: "alice", OPS: {"admin": True}}))
    path.chmod(0o600)
    ring = KeyRing.from_file(path)
    assert ring.is_admin(OPS) and ring.tenant_for(ALICE) == "alice"
