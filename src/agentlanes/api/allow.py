"""``Allow`` on OPTIONS answers lists every method of the path.

Litestar 2 makes the OPTIONS handler of a path when the path's first handler is
registered, and that handler answers with the methods of the route of that moment. A
controller whose GET and POST share a path registers them one after the other, so the
OPTIONS answer named only the first (``Allow: OPTIONS, POST`` on ``/api/v1/leases``,
which has a GET as well). This is litestar-org/litestar#4169, fixed in Litestar 3 only;
checked against Litestar 2.25.0. Its 405 answers are right: they read the final routes.

Litestar offers no setting for it, so ``OptionsAllow`` is a ``before_send`` hook (the
public way to change an answer's headers) that writes, on every OPTIONS answer of an HTTP
route, the methods of that path's final route (``Litestar.routes``), found by the path
template Litestar puts in the scope. ``tests/api/test_litestar_seams.py`` fails once a
Litestar upgrade fixes the bug, saying to remove this module.
"""

from __future__ import annotations

from litestar import Litestar
from litestar.datastructures import MutableScopeHeaders
from litestar.routes import HTTPRoute
from litestar.types import Message, Scope


class OptionsAllow:
    """A ``before_send`` hook: ``Allow`` on OPTIONS answers names every method of the path."""

    def __init__(self) -> None:
        self._allow: dict[str, str] | None = None  # path template -> Allow, once routed

    def allow(self, app: Litestar) -> dict[str, str]:
        """``Allow`` of every HTTP path of ``app``, by path template (read once)."""
        if self._allow is None:
            self._allow = {
                route.path_format or "/": ", ".join(sorted(route.methods))
                for route in app.routes
                if isinstance(route, HTTPRoute)
            }
        return self._allow

    async def __call__(self, message: Message, scope: Scope) -> None:
        if message["type"] != "http.response.start" or scope.get("method") != "OPTIONS":
            return
        allow = self.allow(scope["app"]).get(scope.get("path_template", ""))
        if allow is not None:
            if "headers" not in message:
                message["headers"] = []
            MutableScopeHeaders.from_message(message)["Allow"] = allow
