"""Chat, blocks, follows and presence: who talks to whom, and who is here."""
