"""`python -m compaction_inspector.tui.cli`: the command, as the console script runs it."""

from compaction_inspector.tui.cli import main

raise SystemExit(main())
