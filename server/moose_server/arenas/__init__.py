"""Arena tournaments: their records and scripts, the loop that runs them, their messages."""
