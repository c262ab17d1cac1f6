"""Redis: the store, its keys and scripts, the connection, the embedded server."""
