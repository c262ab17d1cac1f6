"""Who plays: guests and accounts, tokens, names, ratings, leaderboards, limits."""
