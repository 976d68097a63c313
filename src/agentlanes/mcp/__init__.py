"""The MCP server: agentlanes as tools, over stdio (``agentlanes mcp``, ``server.py``) and
over streamable HTTP at ``/mcp`` inside ``agentlanes serve`` (``http.py``)."""
