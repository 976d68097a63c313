"""Settings every in-process test app starts from."""

from __future__ import annotations

from typing import Any

# TestClient's requests carry `Host: testserver.local`: one more name for this server (the
# defaults allow localhost, 127.0.0.1, [::1] and the configured host only).
TEST_APP_SETTINGS: dict[str, Any] = {
    "admin_token": "admin-secret-for-the-test-suite-2026",
    "allowed_hosts": ["testserver.local", "localhost", "127.0.0.1", "[::1]"],
}
