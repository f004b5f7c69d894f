"""A store that cannot be reached raises StoreUnavailableError, for every call."""

from __future__ import annotations

import socket
from pathlib import Path

import numpy as np
import pytest
from store_helpers import make_episode

from episeg.errors import BackendUnavailableError, StoreError, StoreUnavailableError
from episeg.store import ChromaBackend
from episeg.testing import ChromaServer


@pytest.mark.slow
class TestStoreDown:
    def test_server_stopped_mid_session(self, tmp_path: Path) -> None:
        server = ChromaServer(tmp_path / "srv")
        try:
            store = server.backend().store_for("alice")
            ep = make_episode("e1", [1, 0])
            store.add([ep])
            assert store.count() == 1
        finally:
            server.stop()
        calls = [
            lambda: store.add([ep]),
            lambda: store.get(["e1"]),
            lambda: store.count(),
            lambda: store.query(np.array([1.0, 0.0]), k=1),
            lambda: store.list_episodes(),
            lambda: store.update([ep]),
            lambda: store.delete(["e1"]),
        ]
        for call in calls:
            with pytest.raises(StoreUnavailableError, match="unreachable"):
                call()

    def test_nothing_listening(self) -> None:
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = int(s.getsockname()[1])
        with pytest.raises(StoreUnavailableError) as info:
            ChromaBackend.http("127.0.0.1", port)
        assert isinstance(info.value, BackendUnavailableError)
        assert isinstance(info.value, StoreError)
