"""``python -m pi_tui``."""

from pi_tui.cli import main

raise SystemExit(main())
