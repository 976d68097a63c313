"""One page of a list: the request's ``limit``/``offset`` checked once, one page of rows
and the count of every match read together, and the answer's shape
(``{<key>: [...], "total", "limit", "offset"}``) written once for every list endpoint."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from sqlmodel.ext.asyncio.session import AsyncSession

from agentlanes.services.validation import check_page
from agentlanes.store import queries

Row = TypeVar("Row")


@dataclass(frozen=True)
class PageRequest:
    """A checked ``limit``/``offset`` (400 naming the field when out of range)."""

    limit: int
    offset: int

    @classmethod
    def of(cls, limit: int | None, offset: int | None) -> PageRequest:
        return cls(*check_page(limit, offset))

    async def read(
        self, db: AsyncSession, model: type[Any], conditions: Sequence[Any], order: Sequence[Any]
    ) -> Page[Any]:
        """This page of ``model`` rows matching ``conditions`` in ``order``, and how many
        match in all."""
        rows, total = await queries.page_of(db, model, conditions, order, self.limit, self.offset)
        return Page(rows, total, self)

    def of_list(self, rows: Sequence[Row]) -> Page[Row]:
        """This page of rows filtered in Python (all of them already read)."""
        return Page(rows[self.offset : self.offset + self.limit], len(rows), self)


@dataclass(frozen=True)
class Page(Generic[Row]):
    rows: Sequence[Row]
    total: int
    request: PageRequest

    def answer(self, key: str, view: Callable[[Row], Any], **extra: Any) -> dict[str, Any]:
        """The list answer: the rows' views under ``key``, any ``extra`` fields, and the
        paging fields."""
        return {
            key: [view(row) for row in self.rows],
            **extra,
            "total": self.total,
            "limit": self.request.limit,
            "offset": self.request.offset,
        }


FIRST_PAGE = PageRequest.of(None, None)
