"""What the agents' news needs beyond the events: who was refused which lease."""

from __future__ import annotations


class LeaseRefusals:
    """Who was refused which lease (a refusal is not an event): ``lease.free`` goes to them
    when it ends. Kept in this process's memory, bounded."""

    def __init__(self, kept: int = 10_000) -> None:
        self.kept = kept
        self._refused: dict[tuple[int, str], set[str]] = {}

    def note(self, project_id: int, resource: str, session_id: str) -> None:
        if len(self._refused) >= self.kept:
            self._refused.clear()
        self._refused.setdefault((project_id, resource), set()).add(session_id)

    def refused(self, project_id: int, resource: str, session_id: str) -> bool:
        return session_id in self._refused.get((project_id, resource), ())

    def forget(self, project_id: int, resource: str) -> None:
        self._refused.pop((project_id, resource), None)
