"""The ``validator`` command: one module per subcommand."""
