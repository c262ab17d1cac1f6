"""What a storage call raises when Redis cannot be reached or answer: one name for it."""

from __future__ import annotations

from redis.exceptions import RedisError

__all__ = ["UNAVAILABLE"]

# A call that raises one of these did not happen, or may not have: the caller
# answers `unavailable` or tries again later.
UNAVAILABLE: tuple[type[Exception], ...] = (RedisError, OSError)
