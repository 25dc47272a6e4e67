"""One module per subcommand (see `arena_tui.cli`)."""
