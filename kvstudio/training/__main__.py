"""``python -m kvstudio.training``: the training commands without the main CLI."""

from kvstudio.cli.train import main

raise SystemExit(main())
