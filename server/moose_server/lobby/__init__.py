"""Where players meet: the matchmaking queue, private tables, dealing, live games."""
