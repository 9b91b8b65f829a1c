"""``python -m metaeval``: the command line (same as the ``metaeval`` script)."""

from metaeval.run.cli import main

raise SystemExit(main())
