"""The OpenAPI viewer at ``/schema/swagger``: Swagger UI shipped in the package.

Litestar's ``SwaggerRenderPlugin`` loads Swagger UI from a CDN and starts it with an inline
script; under this server's Content-Security-Policy (``default-src 'self'``, no inline
script: api/edge.py) neither may run, and a third-party script on the dashboard's origin
could read the key the dashboard keeps in sessionStorage. So the page here loads only
files of this server: Swagger UI's own (``dashboard/static/vendor/swagger-ui``, with its
licence; ``scripts/vendor-swagger-ui.sh`` refreshes them from the npm package
swagger-ui-dist) and ``static/openapi.js``, which starts it.
"""

from __future__ import annotations

from html import escape
from typing import Any

from litestar import Request
from litestar.openapi.plugins import OpenAPIRenderPlugin

VENDOR = "/static/vendor/swagger-ui"


class PackagedSwaggerPlugin(OpenAPIRenderPlugin):
    """Swagger UI from this server's own static files, started by an external script."""

    def __init__(self, path: str = "/swagger") -> None:
        super().__init__(path=path, favicon="")

    def render(self, request: Request[Any, Any, Any], openapi_schema: dict[str, Any]) -> bytes:
        title = escape(str(openapi_schema.get("info", {}).get("title", "API")))
        url = escape(self.get_openapi_json_route(request), quote=True)
        return f"""<!DOCTYPE html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>{title} API</title>
  <link rel="stylesheet" href="{VENDOR}/swagger-ui.css">
</head>
<body>
  <div id="swagger-ui" data-url="{url}"></div>
  <script src="{VENDOR}/swagger-ui-bundle.js"></script>
  <script src="/static/openapi.js"></script>
</body>
</html>
""".encode()
