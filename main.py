"""Open the KV Studio window: `python main.py [--lang ko] [--threads 1] [--model PATH]`."""

from kvstudio.ui.app.startup import main

if __name__ == "__main__":
    raise SystemExit(main())
