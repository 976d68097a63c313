"""Fan-out of committed events to live subscribers: memory (one process) or Redis (many).

The hub is only fan-out. Events are durable in the database's event log; a subscriber
that sees a gap in offsets (or is poked) reads the missing events from there.
"""

from agentlanes.hub.base import POLL, Frame, Hub, Subscriber
from agentlanes.hub.factory import create_hub

__all__ = ["POLL", "Frame", "Hub", "Subscriber", "create_hub"]
