"""Kept for editor hooks written by hand for earlier versions (``python -m agentlanes.guard``):
the guard is now ``agentlanes.hooks.guard``."""

from agentlanes.hooks.guard import main

if __name__ == "__main__":
    raise SystemExit(main())
