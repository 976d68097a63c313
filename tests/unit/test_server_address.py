"""Where a running server listens is read back only from a record this user wrote
(issue 40, `project --database` and hostile paths: a database in a shared folder let
another user's record point the `project` commands, and their admin token, elsewhere)."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

from agentlanes.server import address


def test_a_record_others_could_write_is_not_believed(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'shared dir' / 'a;b $(x).db'}"
    (tmp_path / "shared dir").mkdir()
    path = address.record(url, "http://127.0.0.1:9001")
    assert path is not None and path.name == "a;b $(x).db.server.json"
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    assert address.recorded(url) == "http://127.0.0.1:9001"
    # Rewritten by someone else, group- or world-writable: ignored.
    path.write_text(json.dumps({"url": "http://evil.example:80", "pid": 1}))
    os.chmod(path, 0o666)
    assert address.recorded(url) is None
    os.chmod(path, 0o644)
    assert address.recorded(url) == "http://evil.example:80"  # ours again (same user)
