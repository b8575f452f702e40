"""KV Studio: step a MiniMind-style model token by token and watch the KV cache and sampling."""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("kvstudio")
except PackageNotFoundError:  # run from a checkout that was never installed
    __version__ = "0.0.0+checkout"
