"""Limits per client: open sockets, metered requests, and what one client may hold at once."""
