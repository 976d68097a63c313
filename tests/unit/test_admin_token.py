"""The admin token's strength check at start (issue 40: two guessable tokens started the
server)."""

from __future__ import annotations

import secrets

import pytest

from agentlanes.admin_token import admin_token_problem


@pytest.mark.parametrize(
    "weak",
    [
        "your-admin-token-here-0000000000000",  # the two
        "abcdefghijklmnopqrstuvwxyzabcdefghij",
        "0123456789012345678901234567890123",
        "zyxwvutsrqponmlkjihgfedcbazyxwvutsrq",
        "a1b2c3d4" * 5,  # a block repeated
        "ababababcdcdcdcdababababcdcdcdcdabab",  # few distinct characters
        "prod-token-0000000000-aaaaaaaaaaaaaaa",
        "YOUR_SECRET_GOES_IN_THIS_PLACE_2026!",
    ],
)
def test_a_long_but_guessable_admin_token_is_refused(weak: str) -> None:
    assert admin_token_problem(weak), weak


def test_random_and_suite_tokens_pass() -> None:
    for good in (
        "admin-secret-for-the-test-suite-2026",
        "bench-admin-token-of-at-least-32-characters",
        "soak-admin-token-of-at-least-32-characters",
        "3f1c9a2b7e4d5f60a1b2c3d4e5f60718",
    ):
        assert admin_token_problem(good) is None, good
    for _ in range(2000):
        for token in (secrets.token_hex(16), secrets.token_hex(32), secrets.token_urlsafe(32)):
            assert admin_token_problem(token) is None, token
