"""Games in play: a move from load to commit, event streams, deadlines, results."""
