"""Each instance's consumer of the delivery stream: take a notice, send it once, ack it.

One notice, taken (store.py: new, or pending past the claim idle time):

1. already marked sent (its instance died between the send and the ack): ack;
2. its kind turned off by the player: ack;
3. take its subject's quiet mark (`MOOSE_NOTIFY_QUIET`), unless this very notice
   holds it: another notice of that game and kind went out lately, on either
   channel: ack;
4. push it to each subscription (404/410 drops one; a timeout is tried again,
   `notify_backoff` seconds later, doubling, `notify_retries` tries in all); if
   no push went out, mail it to a confirmed address;
5. mark it sent, then ack. Nothing sent: the quiet mark is let go.

An instance that dies before 5 leaves the entry pending: another instance takes
it after `notify_claim_idle` seconds, and 1 and 3 see to it that it is sent at
most once more (twice only if the instance died between a send and its mark).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import Any

from moose_server.notify.mail import Mailer, link
from moose_server.notify.push import Outcome, Pusher
from moose_server.notify.rules import Notice
from moose_server.notify.store import NotifyStore
from moose_server.settings import Settings
from moose_server.storage.failures import StorageError, one_round
from moose_server.storage.store import Store

__all__ = ["Sender"]

log = logging.getLogger(__name__)

BATCH = 20  # entries taken at a time
POLL = 1.0  # seconds between looks at the stream when nothing woke us
SUBJECTS = {
    "your_move": "Your move",
    "time_running_out": "Your time is running out",
    "challenge_received": "You are challenged",
}


class Sender:
    """Sends the stream's notices as one consumer of the group (see the module docstring)."""

    def __init__(
        self,
        store: NotifyStore,
        pusher: Pusher,
        mailer: Mailer,
        settings: Settings,
        consumer: str,
        games: Store,
    ) -> None:
        self.store = store
        self.games = games  # a reminder goes only while its game is still at its version
        self.pusher = pusher
        self.mailer = mailer
        self.settings = settings
        self.consumer = consumer
        self.idle_ms = int(settings.notify_claim_idle * 1000)
        self.quiet_ms = int(settings.notify_quiet * 1000)
        self._woken = asyncio.Event()
        self._joined = False  # the stream and its group are made

    def wake(self) -> None:
        """Look at the stream now: this instance has just queued a notice."""
        self._woken.set()

    async def run(self) -> None:
        """Send notices until cancelled."""
        while True:
            self._woken.clear()
            taken = await one_round(self.round, "notices", log)
            if taken:
                continue  # there may be more
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._woken.wait(), POLL)

    async def round(self) -> int:
        """Take and deliver one batch of entries: how many there were."""
        if not self._joined:
            await self.store.join_group()
            self._joined = True
        await self.store.release_due(BATCH)
        try:
            entries = await self.store.take(self.consumer, self.idle_ms, BATCH)
        except StorageError as exc:
            if "NOGROUP" not in str(exc):
                raise
            self._joined = False  # Redis lost the group (a failover, a flush): make it again
            return 0
        for entry_id, fields in entries:
            await self.deliver(entry_id, Notice.of(fields))
        return len(entries)

    async def deliver(self, entry_id: bytes, notice: Notice) -> None:
        """Send one notice unless it was sent already; ack its entry."""
        if not await self.store.was_sent(notice) and await self.send(notice):
            await self.store.mark_sent(notice)
        await self.store.done(entry_id)

    async def send(self, notice: Notice) -> bool:
        """Send the notice on one channel, if the player wants it: whether it went out."""
        prefs = await self.store.prefs(notice.player)
        if notice.kind == "confirm_email":
            return await self._confirm(notice, prefs)
        if prefs.get(notice.kind) == "0" or not await self._still_due(notice):
            return False
        if not await self.store.quiet(notice, self.quiet_ms):
            return False
        if await self._push(notice) or await self._mail(notice, prefs):
            return True
        await self.store.unquiet(notice)
        return False

    async def _still_due(self, notice: Notice) -> bool:
        """A reminder whose game moved on (or ended) since is not sent."""
        if notice.kind != "time_running_out":
            return True
        loaded = await self.games.load(notice.game)
        return loaded.data is not None and loaded.version == notice.seq

    async def _push(self, notice: Notice) -> bool:
        """Push to each of the player's subscriptions: whether any took it."""
        sent = False
        for sub in await self.store.subscriptions(notice.player):
            outcome = await self._tries(self.pusher.send, sub, notice.payload())
            if outcome is Outcome.GONE:
                await self.store.unsubscribe(notice.player, sub["endpoint"])
            sent = sent or outcome is Outcome.SENT
        return sent

    async def _mail(self, notice: Notice, prefs: dict[str, str]) -> bool:
        """Mail a confirmed address: whether it went out."""
        address, unsub = prefs.get("email"), prefs.get("unsub")
        if not self.mailer.enabled or prefs.get("email_ok") != "1" or not address or not unsub:
            return False
        subject = SUBJECTS.get(notice.kind, "Moose House")
        site = self.settings.public_url.rstrip("/")
        if notice.challenge:  # answered in the lobby
            body = f"{notice.text}\n\nAnswer it: {site}/"
        else:
            body = f"{notice.text}\n\nYour game: {site}/play/{notice.game}"
        stop = link(self.settings, "unsubscribe", notice.player, unsub)
        return await self._tries(self.mailer.send, address, subject, body, stop) is Outcome.SENT

    async def _confirm(self, notice: Notice, prefs: dict[str, str]) -> bool:
        """The confirm link, to the address set, while it is still the one set."""
        address, token, unsub = prefs.get("email"), prefs.get("confirm"), prefs.get("unsub")
        if not self.mailer.enabled or not address or token != notice.game or not unsub:
            return False
        go = link(self.settings, "confirm", notice.player, token)
        body = f"Someone (you, we hope) asked Moose House to mail notices here.\n\nConfirm: {go}"
        stop = link(self.settings, "unsubscribe", notice.player, unsub)
        outcome = await self._tries(self.mailer.send, address, "Confirm your address", body, stop)
        return outcome is Outcome.SENT

    async def _tries(self, send: Any, *args: Any) -> Outcome:
        """`send(*args)`, tried again after a timeout, `notify_backoff` seconds and doubling."""
        outcome = Outcome.RETRY
        for attempt in range(self.settings.notify_retries):
            if attempt:
                await asyncio.sleep(self.settings.notify_backoff * 2 ** (attempt - 1))
            outcome = await send(*args)
            if outcome is not Outcome.RETRY:
                break
        return outcome
