"""A scripted model server for the real agent programs (SPEC "Real agent programs").

Each agent program installed from npm is pointed, by its own documented base-URL setting,
at a :class:`~tests.support.scripted_model.server.ModelServer` on 127.0.0.1. The server
speaks each program's model API (one module per API under ``dialects/``), answers every
request that offers tools with the next step of a :class:`~.script.Script` (a tool call
of the program's own tool names, or a final text), and records every request, so a test
can read what reached the model: a refusal's reason, an injected message, how often.
"""

from tests.support.scripted_model.script import Script, Step
from tests.support.scripted_model.server import ModelRequest, ModelServer, Recorded

__all__ = ["ModelRequest", "ModelServer", "Recorded", "Script", "Step"]
