"""Moose House server: aiohttp WebSockets over Redis."""

from __future__ import annotations

__all__: list[str] = []
