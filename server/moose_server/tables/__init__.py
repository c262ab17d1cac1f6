"""Private tables, and invitations to them: rematches and challenges."""
