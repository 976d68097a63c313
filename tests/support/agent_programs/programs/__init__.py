"""One driver per agent program (``PROGRAM``); see ``tests.support.agent_programs.base``."""
