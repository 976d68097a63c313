"""The agent-side runtime, below the hooks, the CLI and the MCP server (standard library
only: the hooks import it on every tool call).

- ``keepalive``: the keepalive process of an agent's session (its pid file, starting and
  stopping it); the ``lanes keepalive`` command itself is ``agentlanes.cli.keepalive``;
- ``ledger``: whose lines are whose in a working tree several agents share (SPEC "Many
  agents, one working tree");
- ``tree``: which agents live in this working tree.
"""
