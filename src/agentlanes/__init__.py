"""agentlanes: real-time presence and conflict service for coding agents."""

__version__ = "0.1.0"
