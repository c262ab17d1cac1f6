"""Limits per client: the table of limits (rates.py), the one limiter of rates
(limiter.py), open sockets (limits.py), and what one client may hold at once (quotas.py)."""
