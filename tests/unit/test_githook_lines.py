"""The git hook's lines (client/report.py, as every caller's) name whether each overlap
is certain."""

from __future__ import annotations

from agentlanes.client.report import conflict_lines


def test_lines_say_for_certain_or_only_if_a_directory() -> None:
    conflicts = [
        {
            "agent_name": "alice",
            "overlapping_area": False,
            "certain": True,
            "overlapping_files": [
                {
                    "pattern": "src/a.py",
                    "their_pattern": "src/**",
                    "example": "src/a.py",
                    "certain": True,
                },
                {
                    "pattern": "package.json/a.py",
                    "their_pattern": "package.json",
                    "example": "package.json/a.py",
                    "certain": False,
                    "if_directory": "package.json",
                },
            ],
        }
    ]
    assert conflict_lines(conflicts) == [
        "src/a.py is claimed by alice for certain (their pattern src/**)",
        "package.json/a.py is claimed by alice only if `package.json` is a directory "
        "(their pattern package.json)",
    ]
