"""Polling for something a background job or another process makes true."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


def wait_for(predicate: Callable[[], T], timeout: float = 10) -> T:
    """``predicate()``'s first truthy value within ``timeout`` seconds (polled every
    0.1 s), else its value at the end."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.1)
    return predicate()
