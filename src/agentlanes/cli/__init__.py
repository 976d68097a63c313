"""Command line: `agentlanes` and its alias `lanes`."""
