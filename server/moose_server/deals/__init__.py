"""Provably fair deals: the seats' seeds, their records and scripts, and the deal they make."""
