"""What `moose admin` prints: times and tables (rich), for its actions and arenas."""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

from rich.table import Table
from rich.text import Text

__all__ = ["table", "when"]


def when(ms: int | str) -> str:
    """A time in ms since the epoch as UTC text."""
    return time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(int(ms) / 1000))


def table(title: str, columns: Sequence[str], rows: Sequence[Sequence[Any]]) -> Table:
    """A rich table with these columns and rows, each cell shown as plain text."""
    out = Table(title=title, title_justify="left", show_lines=False)
    for column in columns:
        out.add_column(column, overflow="fold")
    for row in rows:
        out.add_row(*(Text(str(x)) for x in row))  # plain text: never read as markup
    return out
