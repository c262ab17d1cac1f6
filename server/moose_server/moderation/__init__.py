"""Moderation: bans, reports, refusals noted for operators, moderators' actions and notices."""
