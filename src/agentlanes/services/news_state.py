"""What the agents' news needs beyond the events: who was refused which lease."""

from __future__ import annotations

# Refusals kept per project (the oldest of that project dropped first): one project's
# refusals never push out another's.
KEPT_PER_PROJECT = 1_000


class LeaseRefusals:
    """Who was refused which lease (a refusal is not an event): ``lease.free`` goes to them
    when it ends, once. Kept in this process's memory, bounded per project."""

    def __init__(self, kept_per_project: int = KEPT_PER_PROJECT) -> None:
        self.kept_per_project = kept_per_project
        # project -> {(resource, session): [offset at the refusal, offset of the first
        # release or expiry after it, once a news call has told it]}, oldest first.
        self._refused: dict[int, dict[tuple[str, str], list[int | None]]] = {}

    def note(self, project_id: int, resource: str, session_id: str, offset: int) -> None:
        """``session_id`` was refused the lease on ``resource`` when the project's event
        log was at ``offset``."""
        kept = self._refused.setdefault(project_id, {})
        kept.pop((resource, session_id), None)
        kept[(resource, session_id)] = [offset, None]  # newest last
        while len(kept) > self.kept_per_project:
            del kept[next(iter(kept))]

    def freed(self, project_id: int, resource: str, session_id: str, offset: int) -> bool:
        """Whether the lease's end at event ``offset`` is news to the session: the first
        release or expiry after its refusal (the same event again when read again, never a
        later one: it was refused once)."""
        entry = self._refused.get(project_id, {}).get((resource, session_id))
        if entry is None:
            return False
        refused_at, first = entry
        assert refused_at is not None
        if offset <= refused_at:
            return False
        if first is None:
            entry[1] = offset
            return True
        return offset <= first

    def forget_project(self, project_id: int) -> None:
        self._refused.pop(project_id, None)
