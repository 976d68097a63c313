"""Use cases. Each runs in one transaction that writes the state change and its events."""
