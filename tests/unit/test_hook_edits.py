"""The agent side's edits (hooks/edits.py) read off real git repositories: the base lines
each hunk replaces, the base blob, new, deleted, renamed, binary and ignored files, paths
with spaces, and the debounce state that keeps a burst to one send."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from agentlanes.client.config import LocalConfig
from agentlanes.domain.digests import digest
from agentlanes.hooks import edits

ENV = {
    **{k: v for k, v in os.environ.items() if not k.startswith(("GIT_", "AGENTLANES_"))},
    "GIT_CONFIG_NOSYSTEM": "1",
}


def git(repo: Path, *args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=repo, env=ENV, capture_output=True, text=True, check=True
    ).stdout


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    git(root, "config", "user.name", "T")
    git(root, "config", "user.email", "t@example.com")
    lines = "".join(f"line {i}\n" for i in range(1, 21))
    (root / "a.py").write_text(lines)
    (root / "with space.txt").write_text(lines)
    (root / "gone.txt").write_text("x\ny\n")
    (root / "old.txt").write_text(lines)
    (root / "img.bin").write_bytes(b"\0\1\2")
    (root / ".gitignore").write_text("*.log\n")
    git(root, "add", ".")
    git(root, "commit", "-q", "-m", "base")
    return root


def blob(repo: Path, path: str) -> str:
    return git(repo, "rev-parse", f"HEAD:{path}").strip()


def edit_lines(path: Path, changes: dict[int, str | None], insert: dict[int, str] | None = None):
    """Replace (str) or delete (None) 1-based lines; insert text after line N."""
    old = path.read_text().splitlines(keepends=True)
    out = []
    for i, line in enumerate(old, 1):
        if i in changes:
            if changes[i] is not None:
                out.append(changes[i] + "\n")
        else:
            out.append(line)
        if insert and i in insert:
            out.append(insert[i] + "\n")
    if insert and 0 in insert:
        out.insert(0, insert[0] + "\n")
    path.write_text("".join(out))


def one(repo: Path, path: str) -> dict[str, Any]:
    [found] = edits.file_edits(str(repo), [path])
    return found


def test_a_changed_line_is_its_own_base_range_with_the_head_blob(repo: Path) -> None:
    edit_lines(repo / "a.py", {3: "three", 10: "ten", 11: "eleven"})
    assert one(repo, "a.py") == {"path": "a.py", "base": blob(repo, "a.py"),
                                 "ranges": [[3, 3], [10, 11]],
                                 "digests": [digest(["three\n"]),
                                             digest(["ten\n", "eleven\n"])]}  # fmt: skip


def test_a_pure_insertion_replaces_no_base_line(repo: Path) -> None:
    edit_lines(repo / "a.py", {}, insert={5: "new after five", 0: "new at top"})
    assert one(repo, "a.py")["ranges"] == [[1, 0], [6, 5]]


def test_deleted_lines_and_a_deleted_file(repo: Path) -> None:
    edit_lines(repo / "a.py", {4: None, 5: None, 20: None})
    assert one(repo, "a.py")["ranges"] == [[4, 5], [20, 20]]
    (repo / "gone.txt").unlink()
    assert one(repo, "gone.txt") == {"path": "gone.txt", "base": blob(repo, "gone.txt"),
                                     "ranges": [[1, 2]], "digests": [digest([])]}  # fmt: skip


def test_a_new_file_is_one_insertion_on_no_base_staged_or_not(repo: Path) -> None:
    (repo / "src").mkdir()
    (repo / "src/new.py").write_text("a\nb\n")
    assert one(repo, "src/new.py") == {"path": "src/new.py", "base": None, "ranges": [[1, 0]]}
    git(repo, "add", "src/new.py")
    assert one(repo, "src/new.py") == {"path": "src/new.py", "base": None, "ranges": [[1, 0]]}


def test_an_unchanged_file_has_no_ranges_left(repo: Path) -> None:
    assert one(repo, "a.py") == {"path": "a.py", "base": blob(repo, "a.py"), "ranges": []}
    edit_lines(repo / "a.py", {2: "two"})
    git(repo, "add", "a.py")  # staged counts: the diff is against HEAD, not the index
    assert one(repo, "a.py")["ranges"] == [[2, 2]]


def test_a_path_with_spaces_and_ones_that_look_like_pathspec_magic(repo: Path) -> None:
    edit_lines(repo / "with space.txt", {7: "seven"})
    odd = ["[x]*.py", ":colon.txt"]
    for name in odd:
        (repo / name).write_text("one\n")
    git(repo, "--literal-pathspecs", "add", "--", *odd)
    git(repo, "commit", "-q", "-m", "odd names")
    for name in odd:
        (repo / name).write_text("two\n")
    found = {e["path"]: e for e in edits.file_edits(str(repo), ["with space.txt", *odd])}
    assert found["with space.txt"]["ranges"] == [[7, 7]]
    assert found["with space.txt"]["base"] == blob(repo, "with space.txt")
    # Literal paths: ":colon.txt" is no pathspec magic, "[x]*.py" no glob.
    assert found["[x]*.py"]["ranges"] == [[1, 1]]
    assert found[":colon.txt"]["ranges"] == [[1, 1]]
    assert set(found) == {"with space.txt", *odd}


def test_a_rename_is_a_deletion_and_a_new_file(repo: Path) -> None:
    git(repo, "mv", "old.txt", "renamed.txt")
    found = {e["path"]: e for e in edits.file_edits(str(repo), ["old.txt", "renamed.txt"])}
    assert found["renamed.txt"] == {"path": "renamed.txt", "base": None, "ranges": [[1, 0]]}
    assert found["old.txt"]["ranges"] == [[1, 20]]
    # Only the new name touched: only it is reported.
    assert [e["path"] for e in edits.file_edits(str(repo), ["renamed.txt"])] == ["renamed.txt"]


def test_ignored_and_missing_files_are_left_out_and_a_binary_is_every_line(repo: Path) -> None:
    from agentlanes.domain.edits import WHOLE_FILE

    (repo / "img.bin").write_bytes(b"\0\3")
    (repo / "debug.log").write_text("noise\n")
    (repo / "sub").mkdir()
    found = edits.file_edits(str(repo), ["img.bin", "debug.log", "sub", "a.py"])
    assert [e["path"] for e in found] == ["img.bin", "a.py"]
    # git prints no lines of a binary file: its change is every line (two changes of one
    # binary file conflict at merge, and meet here).
    assert found[0]["ranges"] == [list(WHOLE_FILE)]
    # Made and removed again: no change left (drops what may have been sent).
    assert edits.file_edits(str(repo), ["never.py"]) == [
        {"path": "never.py", "base": None, "ranges": []}
    ]


def test_a_repository_without_commits_has_only_new_files(repo: Path, tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    git(empty, "init", "-q")
    (empty / "f.txt").write_text("x\n")
    assert edits.file_edits(str(empty), ["f.txt"]) == [
        {"path": "f.txt", "base": None, "ranges": [[1, 0]]}
    ]


def test_repository_paths_leave_out_other_places(repo: Path, tmp_path: Path) -> None:
    paths = edits.repo_paths(
        str(repo),
        [str(repo / "a.py"), str(tmp_path / "elsewhere.py"), str(repo / ".git/config"),
         str(repo / "src/../with space.txt"), str(repo / "a.py")],
    )  # fmt: skip
    assert paths == ["a.py", "with space.txt"]


# -- the debounce ----------------------------------------------------------------------------


class Sent:
    def __init__(self) -> None:
        self.bodies: list[dict[str, Any]] = []

    def __call__(self, cfg: Any, method: str, path: str, body: Any, token: Any = None) -> Any:
        assert (method, path, token) == ("POST", "/api/v1/status", "tok")
        self.bodies.append(body)
        return {}


@pytest.fixture
def sent(monkeypatch: pytest.MonkeyPatch) -> Sent:
    from agentlanes.hooks import http

    record = Sent()
    monkeypatch.setattr(http, "call", record)
    return record


def cfg_for(repo: Path) -> LocalConfig:
    return LocalConfig(root=str(repo))


SESSION = {"session_id": "s1", "session_token": "tok", "agent_name": "me"}


def test_a_burst_is_one_send_of_everything_pending(repo: Path, sent: Sent) -> None:
    cfg = cfg_for(repo)
    edit_lines(repo / "a.py", {1: "one"})
    (repo / "n.py").write_text("x\n")
    # The first edit of a burst schedules the send; the rest only join it.
    scheduled: list[float] = []
    real = edits._spawn_sender
    edits._spawn_sender = lambda cfg, agent, due, env: scheduled.append(due) or True  # type: ignore[assignment]
    try:
        assert edits.note(cfg, "me", SESSION, ["a.py"]) == "scheduled"
        for _ in range(4):
            assert edits.note(cfg, "me", SESSION, ["a.py", "n.py"]) == "waiting"
    finally:
        edits._spawn_sender = real  # type: ignore[assignment]
    assert len(scheduled) == 1 and sent.bodies == []
    # The sender (here: at once) sends both files in one status.
    edits.flush(cfg, "me", SESSION, sender=True)
    assert sent.bodies == [{"edits": [
        {"path": "a.py", "base": blob(repo, "a.py"), "ranges": [[1, 1]],
         "digests": [digest(["one\n"])]},
        {"path": "n.py", "base": None, "ranges": [[1, 0]]},
    ]}]  # fmt: skip
    state = edits.pending(cfg, "me")
    assert state["pending"] == {} and "sender_at" not in state
    # Unchanged since: noted again, nothing is sent; changed back to HEAD: dropped.
    edits.note(cfg, "me", SESSION, ["a.py", "n.py"], spawn=False)
    assert len(sent.bodies) == 1
    edit_lines(repo / "a.py", {1: "line 1"})
    state_path = edits.state_file(cfg, "me")
    assert state_path
    data = json.loads(Path(state_path).read_text())
    data["last_send"] = 0  # long ago: the next edit sends at once (no sender process)
    Path(state_path).write_text(json.dumps(data))
    assert edits.note(cfg, "me", SESSION, ["a.py"], spawn=False) == "sent"
    assert sent.bodies[-1] == {"edits": [{"path": "a.py", "base": blob(repo, "a.py"),
                                          "ranges": []}]}  # fmt: skip
    assert "a.py" not in edits.pending(cfg, "me")["sent"]


def test_without_a_sender_a_recent_send_leaves_the_edit_for_stop(repo: Path, sent: Sent) -> None:
    cfg = cfg_for(repo)
    edit_lines(repo / "a.py", {1: "one"})
    assert edits.note(cfg, "me", SESSION, ["a.py"], spawn=False) == "sent"
    edit_lines(repo / "a.py", {2: "two"})
    assert edits.note(cfg, "me", SESSION, ["a.py"], spawn=False) == "later"
    assert len(sent.bodies) == 1
    # Stop: the last burst goes out.
    assert edits.flush(cfg, "me", SESSION)[0]["ranges"] == [[1, 2]]
    assert edits.flush(cfg, "me", SESSION) == []


def test_an_unreachable_server_keeps_the_files_pending(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from agentlanes.hooks import http

    def down(*args: Any, **kwargs: Any) -> Any:
        raise http.LeanUnreachable("refused")

    monkeypatch.setattr(http, "call", down)
    cfg = cfg_for(repo)
    edit_lines(repo / "a.py", {1: "one"})
    assert edits.flush(cfg, "me", SESSION) == []
    edits.note(cfg, "me", SESSION, ["a.py"], spawn=False)
    assert list(edits.pending(cfg, "me")["pending"]) == ["a.py"]


def test_a_new_session_starts_with_nothing_sent(repo: Path, sent: Sent) -> None:
    cfg = cfg_for(repo)
    edit_lines(repo / "a.py", {1: "one"})
    edits.note(cfg, "me", SESSION, ["a.py"], spawn=False)
    edits.note(cfg, "me", {**SESSION, "session_id": "s2"}, ["a.py"], spawn=False)
    assert [len(b["edits"]) for b in sent.bodies] == [1, 1]


def test_the_sender_process_sends_after_the_debounce(repo: Path) -> None:
    """The real sender: its own process (``python -m agentlanes.hooks.edits send``), which
    reads the configuration and the session itself, sends one debounce later, and hands
    the schedule back."""
    import http.server
    import threading
    import time

    from agentlanes.client.config import load_config, save_session

    bodies: list[Any] = []

    class Server(http.server.BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers["Content-Length"]))
            bodies.append((self.path, self.headers["X-Session-Token"], json.loads(body)))
            answer = b'{"session_id": "s1", "agent_name": "me"}'
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(answer)))
            self.end_headers()
            self.wfile.write(answer)

        def log_message(self, *args: Any) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Server)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        (repo / ".agentlanes.toml").write_text(
            f'url = "http://127.0.0.1:{server.server_address[1]}"\napi_key = "k"\n'
        )
        cfg = load_config(repo, {})
        save_session(cfg, dict(SESSION))
        edit_lines(repo / "a.py", {1: "one"})
        assert edits.note(cfg, "me", SESSION, ["a.py"]) == "scheduled"
        assert edits.note(cfg, "me", SESSION, ["a.py"]) == "waiting"
        state = edits.pending(cfg, "me")
        assert "sender_at" in state and list(state["pending"]) == ["a.py"]
        assert bodies == []  # not before the debounce
        deadline = time.time() + 15
        while "last_send" not in edits.pending(cfg, "me") and time.time() < deadline:
            time.sleep(0.05)
    finally:
        server.shutdown()
    state = edits.pending(cfg, "me")
    assert "sender_at" not in state and state["pending"] == {}
    sent = {"path": "a.py", "base": blob(repo, "a.py"), "ranges": [[1, 1]],
            "digests": [digest(["one\n"])]}  # fmt: skip
    assert bodies == [("/api/v1/status", "tok", {"edits": [sent]})]
    assert state["sent"] == {"a.py": {"base": sent["base"], "ranges": [[1, 1]],
                                      "digests": sent["digests"]}}  # fmt: skip


def test_when_git_cannot_say_the_files_stay_pending(
    repo: Path, sent: Sent, monkeypatch: pytest.MonkeyPatch
) -> None:
    cfg = cfg_for(repo)
    edit_lines(repo / "a.py", {1: "one"})
    monkeypatch.setattr(edits, "_git", lambda root, args, stdin=None: None)
    with pytest.raises(edits.GitUnreadable):
        edits.file_edits(str(repo), ["a.py"])
    assert edits.note(cfg, "me", SESSION, ["a.py"], spawn=False) == "sent"  # tried
    assert sent.bodies == [] and list(edits.pending(cfg, "me")["pending"]) == ["a.py"]


# -- each agent's after-edit event ------------------------------------------------------------

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "agent_hooks"


def filled(value: Any, repo: str) -> Any:
    if isinstance(value, str):
        return value.replace("$REPO", repo).replace("$SID", "s1")
    if isinstance(value, list):
        return [filled(v, repo) for v in value]
    if isinstance(value, dict):
        return {k: filled(v, repo) for k, v in value.items()}
    return value


@pytest.mark.parametrize(
    ("agent", "step", "expected"),
    [
        # Anchored edits are Edit, whole-file writes Write (a stale one is refused).
        ("cursor", "after_edit", ("Edit", {"file_path": "/r/docs/free.md"})),
        ("cursor", "after_file_edit", ("Write", {"file_path": "/r/docs/free.md"})),
        ("gemini", "after_edit", ("Edit", {"file_path": "/r/docs/free.md"})),
        ("copilot", "after_edit", ("Edit", {"file_path": "/r/docs/free.md"})),
        ("cline", "after_edit", ("Edit", {"file_path": "docs/free.md"})),
        ("windsurf", "after_edit", ("Write", {"file_path": "/r/docs/free.md"})),
        ("opencode", "after_edit", ("Edit", {"file_path": "/r/docs/free.md"})),
    ],
)
def test_each_agents_after_edit_event_notes_the_edit_in_claude_codes_terms(
    monkeypatch: pytest.MonkeyPatch, agent: str, step: str, expected: tuple[str, Any]
) -> None:
    import importlib

    from agentlanes.hooks.adapters import core

    noted: list[tuple[str, Any]] = []
    monkeypatch.setattr(core, "edited", lambda a, sid, cwd, tool, args: noted.append((tool, args)))
    monkeypatch.setattr(core, "news", lambda *args: None)
    event = json.loads((FIXTURES / f"{agent}.json").read_text())["events"][step]
    payload = filled(event["input"], "/r")
    if agent == "opencode":  # the plugin's own shape: the args it kept from the before hook
        args = filled(event["before"]["args"], "/r")
        payload = {"event": event["event"], "session_id": "s1", "tool": payload["tool"],
                   "args": args}  # fmt: skip
    module = importlib.import_module(f"agentlanes.hooks.adapters.{agent}")
    module.answer(payload, event["event"] if agent == "copilot" else None)
    # What an anchored edit replaces goes along when the agent says (the guard then tells
    # its lines under block_on = lines); the rest is the file alone.
    assert [(tool, {"file_path": args["file_path"]}) for tool, args in noted] == [expected]
    [(tool, args)] = noted
    said = payload.get("tool_input") or {}
    if tool == "Edit" and isinstance(said.get("old_string"), str):
        assert (args["old_string"], args["new_string"]) == (said["old_string"], said["new_string"])
    elif tool == "Edit":
        assert set(args) == {"file_path"}


def test_a_turns_end_sends_what_waits(monkeypatch: pytest.MonkeyPatch) -> None:
    from agentlanes.hooks.adapters import core, cursor, opencode

    flushed: list[str] = []
    monkeypatch.setattr(core, "flush", lambda agent, sid, cwd: flushed.append(agent))
    monkeypatch.setattr(core, "urgent", lambda *args: None)
    cursor.answer({"conversation_id": "s1", "workspace_roots": ["/r"]}, "stop")
    opencode.answer({"event": "session.idle", "session_id": "s1", "cwd": "/r"}, None)
    assert flushed == ["cursor", "opencode"]


def test_the_git_hook_gets_the_edits_last_sent_for_its_session(repo: Path, sent: Sent) -> None:
    cfg = cfg_for(repo)
    assert edits.last_reported(cfg, "me", SESSION) is None
    edit_lines(repo / "a.py", {4: "four"})
    edits.note(cfg, "me", SESSION, ["a.py"], spawn=False)
    assert edits.last_reported(cfg, "me", SESSION) == [
        {"path": "a.py", "base": blob(repo, "a.py"), "ranges": [[4, 4]]}
    ]
    assert edits.last_reported(cfg, "me", {**SESSION, "session_id": "other"}) is None


def test_claude_codes_post_tool_use_notes_edits_and_bash_writes(
    monkeypatch: pytest.MonkeyPatch, repo: Path
) -> None:
    from agentlanes.hooks import guard

    noted: list[list[str]] = []
    monkeypatch.setattr(
        edits, "after_files", lambda payload, files, env, spawn=True: noted.append(files)
    )
    base = {"session_id": "s1", "cwd": str(repo), "hook_event_name": "PostToolUse"}
    for tool, tool_input in (
        ("Edit", {"file_path": "a.py", "old_string": "a", "new_string": "b"}),
        ("NotebookEdit", {"notebook_path": str(repo / "n.ipynb"), "new_source": "x"}),
        ("Bash", {"command": "sed -i 's/a/b/' a.py 'with space.txt' && rm src/*.py"}),
        ("Read", {"file_path": str(repo / "a.py")}),
    ):
        guard.note_edits({**base, "tool_name": tool, "tool_input": tool_input}, {})
    assert noted == [
        [str(repo / "a.py")],
        [str(repo / "n.ipynb")],
        [str(repo / "a.py"), str(repo / "with space.txt")],  # the glob is no file of lines
    ]
    # A bug in the note never costs the hook its answer.
    monkeypatch.setattr(edits, "after_files", lambda *a, **k: 1 / 0)
    guard.note_edits({**base, "tool_name": "Edit", "tool_input": {"file_path": "a.py"}}, {})
