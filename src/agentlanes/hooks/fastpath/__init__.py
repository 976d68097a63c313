"""The hooks' fast path: ``client`` is what a hook process runs (``python -S -I
agentlanes/hooks/fast.py PROGRAM guard ...``), standard library only; the keepalive's end
is ``agentlanes.hooks.served``. Nothing else lives in this folder: the launcher puts it
first on ``sys.path`` to import ``client`` from its cached bytecode."""
