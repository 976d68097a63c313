"""The hooks' lean HTTP client against a raw socket server that answers garbage.

Whatever bytes come back, ``call_many`` returns parsed JSON objects and LeanApiError
values, or raises LeanUnreachable: the one failure the git hook and the guard turn into
"server unreachable" and ``fail_closed``. Any other exception would escape them.
"""

from __future__ import annotations

import ipaddress
import json
import ssl
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agentlanes.client.config import LocalConfig
from agentlanes.hooks.http import LeanApiError, LeanUnreachable, call_many
from tests.support.raw_server import RawServer

REQUESTS = [
    ("GET", "/api/v1/project", None, None),
    ("POST", "/api/v1/conflicts/check", {"paths": ["a.py"]}, "tok"),
]


@pytest.fixture(scope="module")
def raw() -> Iterator[RawServer]:
    with RawServer() as server:
        yield server


def config(url: str) -> LocalConfig:
    cfg = LocalConfig()
    cfg.url = url
    cfg.api_key = "alk_test"
    cfg.timeout = 5
    return cfg


def outcome(server: RawServer, answer: bytes, scheme: str = "http") -> object:
    server.answer = answer
    cfg = config(f"{scheme}://127.0.0.1:{server.port}")
    try:
        answers = call_many(cfg, REQUESTS)
    except LeanUnreachable as exc:
        assert str(exc)  # a reason the hook can print
        return exc
    assert len(answers) == len(REQUESTS)
    for item in answers:
        assert isinstance(item, dict | LeanApiError), item
    return answers


HEADS = st.sampled_from(
    [
        b"HTTP/1.1 200 OK",
        b"HTTP/1.1 404 Not Found",
        b"HTTP/1.1 502 Bad Gateway",
        b"HTTP/1.1 2x0 OK",
        b"HTTP/1.1",
        b"HTTP/1.1 1_00 Odd",
        b"HTTP/1.0 99999999999999999999 Big",
        b"HTTP/",
        b"<html>",
    ]
)
LENGTHS = st.one_of(
    st.integers(-5, 200).map(lambda n: str(n).encode()),
    st.sampled_from([b"", b"abc", b"1_0", b" 5", b"0x10", b"\xff", b"9" * 40, b"+3"]),
)
CHUNK_SIZES = st.one_of(
    st.integers(0, 300).map(lambda n: b"%x" % n),
    st.sampled_from([b"", b"zz", b"-1", b"1_0", b" a", b"0x5", b"a;ext=1", b"f" * 40]),
)
BODIES = st.one_of(
    st.binary(max_size=300),
    st.sampled_from(
        [
            b'{"ok": true}',
            b'{"error": {"code": "X", "message": "m"}}',
            b'{"error": "flat"}',
            b"[1, 2]",
            b"null",
            b'"text"',
            b"[" * 5000,
            b"<html><body><h1>502 Bad Gateway</h1></body></html>",
            '{"é": 1}'.encode("utf-16"),
        ]
    ),
)


@st.composite
def answers(draw: st.DrawFn) -> bytes:
    """An HTTP-looking answer with a garbled part or two, or any bytes at all."""
    if draw(st.integers(0, 9)) == 0:
        return draw(st.binary(max_size=400))
    head = draw(HEADS)
    body = draw(BODIES)
    framing = draw(st.sampled_from(["length", "chunked", "none", "both"]))
    lines = [head]
    if framing in ("length", "both"):
        lines.append(b"Content-Length: " + draw(LENGTHS))
    if framing in ("chunked", "both"):
        lines.append(b"Transfer-Encoding: chunked")
        pieces = draw(st.lists(st.tuples(CHUNK_SIZES, st.binary(max_size=40)), max_size=4))
        body = b"".join(size + b"\r\n" + data + b"\r\n" for size, data in pieces)
        if draw(st.booleans()):
            body += b"0\r\n\r\n"
    lines += draw(st.lists(st.binary(max_size=30), max_size=2))  # stray header bytes
    raw = b"\r\n".join(lines) + b"\r\n\r\n" + body
    cut = draw(st.integers(0, len(raw)))
    return raw[:cut] if draw(st.integers(0, 4)) == 0 else raw


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(answer=answers())
def test_any_answer_is_parsed_or_unreachable(raw: RawServer, answer: bytes) -> None:
    outcome(raw, answer)


@settings(max_examples=30, deadline=None)
@given(answer=st.one_of(answers(), st.binary(max_size=200)))
def test_garbage_over_tls_is_unreachable(raw: RawServer, answer: bytes) -> None:
    """An ``https://`` URL to something that does not speak TLS: a TLS error."""
    assert isinstance(outcome(raw, answer, "https"), LeanUnreachable)


def ok(body: bytes, head: bytes = b"HTTP/1.1 200 OK") -> bytes:
    return head + b"\r\nContent-Length: %d\r\n\r\n" % len(body) + body


@pytest.mark.parametrize(
    ("answer", "reason"),
    [
        (b"HTTP/1.1 200 OK\r\nContent-Length: abc\r\n\r\n{}", "bad Content-Length"),
        (b"HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n{}", "bad Content-Length"),
        (b"HTTP/1.1 200 OK\r\nContent-Length: 50\r\n\r\n{}", "cut short"),
        (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n{}\r\n0\r\n\r\n", "chunk"),
        (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n9\r\n{}", "cut short"),
        (b"HTTP/1.1 OK\r\n\r\n{}", "status line"),
        (ok(b"<html>oops</html>"), "not a JSON object"),
        (ok(b"[1, 2]"), "not a JSON object"),
        (ok(b"[" * 100_000), "not a JSON object"),
        (ok(b"<html>502 Bad Gateway</html>", b"HTTP/1.1 502 Bad Gateway"), "not an agentlanes"),
        (b"", "not HTTP"),
    ],
)
def test_each_garbled_answer_says_why(raw: RawServer, answer: bytes, reason: str) -> None:
    failed = outcome(raw, answer)
    assert isinstance(failed, LeanUnreachable) and reason in str(failed), failed


def test_good_answers_still_come_through(raw: RawServer) -> None:
    error = json.dumps({"error": {"code": "NOPE", "message": "no"}}).encode()
    assert outcome(raw, ok(b'{"ok": true}')) == [{"ok": True}, {"ok": True}]
    refused = outcome(raw, ok(error, b"HTTP/1.1 409 Conflict"))
    assert isinstance(refused, list) and all(isinstance(a, LeanApiError) for a in refused)
    assert refused[0].code == "NOPE" and refused[0].status == 409
    chunked = b'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\n{"a\r\n5\r\n": 1}\r\n'
    chunked += b"0\r\n\r\n"
    assert outcome(raw, chunked) == [{"a": 1}, {"a": 1}]


def test_a_reset_connection_is_unreachable(raw: RawServer) -> None:
    raw.reset = True
    try:
        assert isinstance(outcome(raw, b""), LeanUnreachable)
    finally:
        raw.reset = False


def self_signed(tmp_path: Path) -> ssl.SSLContext:
    """A server context with a certificate for 127.0.0.1 that no client trusts."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")])
    now = datetime.now(UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - timedelta(minutes=1))
        .not_valid_after(now + timedelta(hours=1))
        .add_extension(
            x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
            critical=False,
        )
        .sign(key, hashes.SHA256())
    )
    pem = tmp_path / "server.pem"
    pem.write_bytes(
        cert.public_bytes(serialization.Encoding.PEM)
        + key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(pem)
    return context


def test_a_certificate_the_client_does_not_trust_is_unreachable(tmp_path: Path) -> None:
    """A real TLS server whose certificate fails verification: a TLS error, nothing else."""
    with RawServer(ok(b'{"ok": true}'), tls=self_signed(tmp_path)) as server:
        failed = outcome(server, ok(b'{"ok": true}'), "https")
    assert isinstance(failed, LeanUnreachable) and "CERTIFICATE_VERIFY_FAILED" in str(failed)
