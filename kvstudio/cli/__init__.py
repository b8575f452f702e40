"""The `kvstudio` command: one parser and `main` in ``main``, one module per subcommand group."""
