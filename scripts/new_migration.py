"""Write a new Alembic revision for the models' changes (for developers).

    .venv/bin/python scripts/new_migration.py "sessions: add recovered_at"

It builds a scratch SQLite database at the newest revision, compares it with the models
and writes agentlanes/store/migrations/versions/<rev>_<slug>.py. Read and edit the
result (fill new NOT NULL columns of existing rows, as 0002 does), then run
tests/store/test_migrations.py: it fails while migrations and models differ.
"""

from __future__ import annotations

import re
import sys
import tempfile
from pathlib import Path

from alembic import command
from alembic.script import ScriptDirectory
from sqlalchemy import create_engine

from agentlanes.store.migrate import alembic_config


def main() -> int:
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    message = sys.argv[1]
    cfg = alembic_config()
    cfg.set_main_option("file_template", "%%(rev)s")  # the revision id is the file name
    head = ScriptDirectory.from_config(cfg).get_current_head() or "0000"
    number = int(head.split("_", 1)[0]) + 1
    slug = re.sub(r"[^a-z0-9]+", "_", message.lower()).strip("_")[:40]
    with tempfile.TemporaryDirectory() as tmp:
        engine = create_engine(f"sqlite:///{Path(tmp) / 'scratch.db'}")
        with engine.begin() as conn:
            cfg.attributes["connection"] = conn
            command.upgrade(cfg, "head")
            command.revision(cfg, message=message, autogenerate=True, rev_id=f"{number:04d}_{slug}")
        engine.dispose()
    return 0


if __name__ == "__main__":
    sys.exit(main())
