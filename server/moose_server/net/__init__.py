"""The doors: one WebSocket per player, handlers, the fan-out hub, frames, HTTP."""
