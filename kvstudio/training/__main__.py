"""``python -m kvstudio.training``: the training commands without the main CLI."""

from kvstudio.training.cli import main

raise SystemExit(main())
