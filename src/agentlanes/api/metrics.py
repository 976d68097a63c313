"""Request metrics at a cost the hot routes can carry.

Litestar's ``PrometheusMiddleware`` builds a ``Request`` and looks up each metric's
labelled child (a lock and a tuple per lookup, four lookups) on every request: about a
quarter of a heartbeat's time over HTTP (bench/api.py). This subclass keeps the same
metrics, names and labels (so ``/metrics`` reads as before) and keeps each labelled child
once it has been made, keyed by what labels it: one dictionary lookup per request.
"""

from __future__ import annotations

import time
from typing import Any

from litestar.plugins.prometheus import PrometheusConfig, PrometheusMiddleware
from litestar.types import ASGIApp, Message, Receive, Scope, Send

_SERVER_ERROR = 500


class LeanPrometheusMiddleware(PrometheusMiddleware):
    """``PrometheusMiddleware``'s metrics, with their labelled children kept (by each
    instance: the children carry its config's ``app_name``)."""

    def __init__(self, app: ASGIApp, config: PrometheusConfig) -> None:
        super().__init__(app, config)
        # (method, path template, status) -> (in progress, count, duration, errors or None)
        self._children: dict[tuple[str, str, int], tuple[Any, Any, Any, Any]] = {}
        self._in_progress: dict[tuple[str, str], Any] = {}

    def _labels(self, method: str, path: str, status: int) -> dict[str, Any]:
        return {
            "method": method,
            "path": path,
            "status_code": status,
            "app_name": self._config.app_name,
        }

    def _gauge(self, method: str, path: str) -> Any:
        key = (method, path)
        gauge = self._in_progress.get(key)
        if gauge is None:
            labels = self._labels(method, path, 200)
            gauge = self.requests_in_progress(labels).labels(*labels.values())
            self._in_progress[key] = gauge
        return gauge

    def _finished(self, method: str, path: str, status: int) -> tuple[Any, Any, Any]:
        key = (method, path, status)
        children = self._children.get(key)
        if children is None:
            labels = self._labels(method, path, status)
            values = [*labels.values()]
            errors = (
                self.requests_error_count(labels).labels(*values)
                if status >= _SERVER_ERROR
                else None
            )
            children = (
                None,
                self.request_count(labels).labels(*values),
                self.request_time(labels).labels(*values),
                errors,
            )
            self._children[key] = children
        return children[1], children[2], children[3]

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        method: str = scope.get("method") or scope["type"]  # type: ignore[assignment]
        if self._config.excluded_http_methods and method in self._config.excluded_http_methods:
            await self.app(scope, receive, send)
            return
        # The route's template, never the raw path: label values stay bounded.
        path: str = scope.get("path_template") or "unmatched"
        start = time.perf_counter()
        span = {"status": 200, "duration": 0.0}

        async def timed_send(message: Message) -> None:
            if message["type"] == "http.response.start":
                span["status"] = message["status"]
            elif message["type"] == "http.response.body":
                span["duration"] = time.perf_counter() - start
            await send(message)

        gauge = self._gauge(method, path)
        gauge.inc()
        try:
            await self.app(scope, receive, timed_send)
        finally:
            gauge.dec()
            count, duration, errors = self._finished(method, path, int(span["status"]))
            if errors is not None:
                errors.inc()
            count.inc()
            duration.observe(span["duration"])
