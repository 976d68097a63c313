"""`python -m agentlanes` is the `agentlanes` command."""

import sys

from agentlanes.cli.main import main

sys.exit(main())
