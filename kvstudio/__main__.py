"""`python -m kvstudio …` is the `kvstudio` command."""

import sys

from kvstudio.cli.main import main

if __name__ == "__main__":
    sys.exit(main())
