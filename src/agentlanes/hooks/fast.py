"""What the agents' hooks run: ``python -S -I .../agentlanes/hooks/fast.py PROGRAM guard
--agent NAME`` behaves as ``PROGRAM guard --agent NAME`` does, in a fraction of the time
(``agentlanes.hooks.fastpath.client`` says how).

This launcher is kept tiny: a script is compiled on every run (3 ms for the client), a
module imported from its folder is read from its cached bytecode.
"""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.realpath(__file__)), "fastpath"))

from client import main  # type: ignore[import-not-found]  # fastpath/client.py

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
