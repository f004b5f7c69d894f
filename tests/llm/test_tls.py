"""The backends verify a server's certificate through the process's one TLS context.

A real HTTPS loopback server (a fresh self-signed certificate for 127.0.0.1) and
the real SDKs: an unknown certificate is refused before any request reaches the
server; the same certificate named by ``SSL_CERT_FILE`` when the context is
built is trusted.
"""

from __future__ import annotations

import datetime
import ipaddress
import ssl
from collections.abc import Iterator
from pathlib import Path

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from episeg.errors import BackendUnavailableError
from episeg.llm import AnthropicBackend, OpenAICompatibleBackend, RetryPolicy, StructuredBackend
from episeg.llm._base import shared_tls_context
from episeg.testing import LoopbackLLMServer, Reply

SCHEMA = {"type": "object", "required": ["score"], "properties": {"score": {"type": "integer"}}}
ONCE = RetryPolicy(attempts=1)


def _self_signed(folder: Path) -> tuple[Path, Path]:
    """A certificate for 127.0.0.1 signed by its own key: (cert.pem, key.pem)."""
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "episeg loopback")])
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(hours=1))
        .add_extension(
            x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
            critical=False,
        )
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    cert_path, key_path = folder / "cert.pem", folder / "key.pem"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return cert_path, key_path


@pytest.fixture
def cert(tmp_path: Path) -> tuple[Path, Path]:
    return _self_signed(tmp_path)


@pytest.fixture
def https_server(cert: tuple[Path, Path]) -> Iterator[LoopbackLLMServer]:
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(*cert)
    with LoopbackLLMServer(tls=context) as server:
        yield server


@pytest.fixture
def fresh_context() -> Iterator[None]:
    """Each test builds the shared context anew, and leaves none behind built from its env."""
    shared_tls_context.cache_clear()
    yield
    shared_tls_context.cache_clear()


def _backend(kind: str, server: LoopbackLLMServer) -> StructuredBackend:
    if kind == "anthropic":
        return AnthropicBackend(base_url=server.anthropic_url, api_key="k", retry=ONCE)
    return OpenAICompatibleBackend(model="m", base_url=server.openai_url, api_key="k", retry=ONCE)


def _ask(backend: StructuredBackend) -> object:
    return backend.complete(system="Rate.", prompt="hi", tool_name="rate", schema=SCHEMA)


@pytest.mark.parametrize("kind", ["anthropic", "openai"])
def test_a_certificate_nobody_trusts_is_refused(
    kind: str,
    https_server: LoopbackLLMServer,
    fresh_context: None,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("SSL_CERT_FILE", raising=False)
    monkeypatch.delenv("SSL_CERT_DIR", raising=False)
    https_server.enqueue(Reply.json({"score": 3}))
    assert https_server.url.startswith("https://127.0.0.1:")
    with pytest.raises(BackendUnavailableError):
        _ask(_backend(kind, https_server))
    assert https_server.requests == []  # refused at the handshake: nothing was sent


@pytest.mark.parametrize("kind", ["anthropic", "openai"])
def test_ssl_cert_file_is_trusted_and_both_backends_share_the_context(
    kind: str,
    https_server: LoopbackLLMServer,
    cert: tuple[Path, Path],
    fresh_context: None,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("SSL_CERT_FILE", str(cert[0]))
    https_server.enqueue(Reply.json({"score": 3}), Reply.json({"score": 4}))
    assert _ask(_backend(kind, https_server)) == {"score": 3}
    monkeypatch.delenv("SSL_CERT_FILE")  # read once, when the context was built
    assert _ask(_backend(kind, https_server)) == {"score": 4}
    assert len(https_server.requests) == 2
