"""Agent-side programs: the git pre-commit hook, the editor guard (Claude Code hooks), the
Bash reader that tells which files a command writes, and the lean HTTP they share.

Nothing here may import the client, the server or their dependencies: these run on every
commit and every edit (see ``tests/unit/test_hook_http.py`` for the import budget)."""
