"""Kept for hooks written by earlier versions (``python -S -m agentlanes.githook``): the hook is now
``agentlanes.hooks.githook``. Two lines, so the hook's import budget stays the same."""

from agentlanes.hooks.githook import main

if __name__ == "__main__":
    raise SystemExit(main())
