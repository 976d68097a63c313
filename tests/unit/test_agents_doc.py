"""docs/agents.md says what `lanes init` writes and where the keepalive logs: from the code."""

from __future__ import annotations

from pathlib import Path

from agentlanes.cli import init

DOC = Path(__file__).resolve().parents[2] / "docs" / "agents.md"


def test_the_init_table_names_every_hook_event_and_the_matcher() -> None:
    events = init.hook_events(["lanes"])
    row = next(line for line in DOC.read_text().splitlines() if "`.claude/settings.json`" in line)
    for name, entry in events.items():
        assert f"`{name}`" in row, name
        if "matcher" in entry:
            assert f'`"{entry["matcher"]}"`' in row
    assert "Bash`" not in row  # no list of tools: every tool
    assert init.__doc__ is not None
    for name in events:
        assert f"``{name}``" in init.__doc__, name


def test_the_doc_names_the_keepalive_log_where_it_is_written() -> None:
    text = DOC.read_text()
    assert "sessions/<agent>.keepalive.log" in text
    assert ".git/agentlanes/keepalive.log" not in text
    assert "Every checked call also sends a heartbeat" not in text
    assert text.count("- **`SessionEnd`**") == 1
