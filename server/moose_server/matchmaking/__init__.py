"""The public queue and the tables it forms, the lobby that deals them, and the live games' list."""
