"""Engine tests (no Qt). A package, so its module names never clash with tests/ui."""
