"""``Allow`` on OPTIONS answers lists every method of the path.

Litestar makes the OPTIONS handler of a path when the path's first handler is registered,
and that handler reads the methods of the route object of that moment. A controller whose
GET and POST share a path registers them one after the other, so the OPTIONS answer named
only the first (``Allow: OPTIONS, POST`` on ``/api/v1/leases``, which has a GET as well).
Pointing each OPTIONS handler at its final route, once every route is registered, fixes it.
"""

from __future__ import annotations

from litestar import Litestar
from litestar.routes import HTTPRoute


def repair_options_allow(app: Litestar) -> None:
    for route in app.routes:
        if not isinstance(route, HTTPRoute) or "OPTIONS" not in route.route_handler_map:
            continue
        handler, _ = route.route_handler_map["OPTIONS"]
        function = getattr(handler, "fn", None)
        for cell in getattr(function, "__closure__", None) or ():
            if isinstance(cell.cell_contents, HTTPRoute):
                cell.cell_contents = route
