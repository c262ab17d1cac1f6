"""The messages and pages of notices: subscriptions, settings, the mail links, the worker.

Socket messages (PROTOCOL.md, "Notices away from the page"): `push_subscribe`,
`push_unsubscribe`, `notify_settings`. HTTP: ``/notify/key`` (the VAPID public
key the page subscribes with), ``/sw.js`` (the page's service worker, served
from the site's root so that its scope is the whole site), ``/notify/confirm``
and ``/notify/unsubscribe`` (the links of the mails).
"""

from __future__ import annotations

import re
import secrets
from pathlib import Path
from typing import Any

from aiohttp import web

from moose.messages import NotifySettings, PushSubscribe, PushUnsubscribe
from moose_server.errors import Refusal
from moose_server.limits.limiter import Limiter
from moose_server.net.router import Router
from moose_server.net.session import Message, Session, player_of
from moose_server.notify.notifier import Notifier
from moose_server.notify.rules import KINDS, Notice, valid_subscription
from moose_server.notify.store import NotifyStore

__all__ = ["NOTIFY", "NotifyHandlers", "add_routes"]

WORKER = Path(__file__).parent / "web" / "sw.js"
EMAIL = re.compile(r"[^@\s]{1,64}@[^@\s]+\.[^@\s]+")


class NotifyHandlers:
    """Registers subscriptions and settings from sockets, answers the mails' links."""

    def __init__(
        self, store: NotifyStore, notifier: Notifier, limiter: Limiter, public_key: str
    ) -> None:
        self.store = store
        self.limiter = limiter
        self.notifier = notifier
        self.public_key = public_key

    def register(self, router: Router) -> None:
        """Handle the socket messages of notices."""
        router.add(
            {
                PushSubscribe: self.push_subscribe,
                PushUnsubscribe: self.push_unsubscribe,
                NotifySettings: self.notify_settings,
            }
        )

    async def push_subscribe(self, conn: Session, msg: PushSubscribe) -> Message:
        """Keep a browser's push subscription (checked; `push_per_player` at most)."""
        sub = valid_subscription(msg.subscription)
        if not await self.store.subscribe(player_of(conn), sub):
            cap = self.store.per_player
            raise Refusal("too_many_subscriptions", f"at most {cap} browsers get pushes")
        return {"type": "push_subscribed"}

    async def push_unsubscribe(self, conn: Session, msg: PushUnsubscribe) -> Message:
        """Drop a push subscription of ours."""
        dropped = await self.store.unsubscribe(player_of(conn), msg.endpoint)
        return {"type": "push_unsubscribed", "dropped": dropped}

    async def notify_settings(self, conn: Session, msg: NotifySettings) -> Message:
        """Change the kinds given and the address; answer every setting."""
        player = player_of(conn)
        given = {kind: getattr(msg, kind) for kind in KINDS}
        changes = {kind: "1" if on else "0" for kind, on in given.items() if on is not None}
        address = msg.email
        if address is not None:
            await self._address(conn, address, changes)
        else:
            await self.store.set_prefs(player, changes)
        return await self.settings_of(player)

    async def _address(self, conn: Session, address: str, changes: dict[str, str]) -> None:
        """A new address (a confirm link goes to it), or "" for none."""
        player = player_of(conn)
        if address == "":
            await self.store.set_prefs(player, changes, drop=("email", "email_ok", "confirm"))
            return
        if conn.generation is None:
            raise Refusal("not_registered", "register an account to get mail")
        if not EMAIL.fullmatch(address):
            raise Refusal("bad_message", "email must be an address like name@example.org")
        async with self.limiter.attempt("confirm_mail", player=player, address=conn.address):
            await self._confirm_mail(player, address, changes)

    async def _confirm_mail(self, player: str, address: str, changes: dict[str, str]) -> None:
        """Keep the new address unconfirmed and queue its confirm link."""
        token = secrets.token_urlsafe(24)
        fresh = {"email": address, "email_ok": "0", "confirm": token}
        prefs = await self.store.prefs(player)
        unsub = prefs.get("unsub") or secrets.token_urlsafe(24)
        await self.store.set_prefs(player, {**changes, **fresh, "unsub": unsub})
        await self.notifier.queue([Notice(player, "confirm_email", token, "confirm")])

    async def settings_of(self, player: str) -> Message:
        """The `notify_settings` answer: each kind, the address and whether it is confirmed."""
        prefs = await self.store.prefs(player)
        subs = await self.store.subscriptions(player)
        out: dict[str, Any] = {"type": "notify_settings"}
        out.update({kind: prefs.get(kind) != "0" for kind in KINDS})
        out.update(email=prefs.get("email"), email_confirmed=prefs.get("email_ok") == "1")
        out.update(push=len(subs), key=self.public_key)
        return out

    # -- HTTP -------------------------------------------------------------------

    async def key(self, request: web.Request) -> web.Response:
        """The VAPID public key (base64url), the page's `applicationServerKey`."""
        return web.json_response({"key": self.public_key})

    async def worker(self, request: web.Request) -> web.FileResponse:
        """The page's service worker, from the site's root."""
        return web.FileResponse(WORKER, headers={"Content-Type": "text/javascript"})

    async def confirm(self, request: web.Request) -> web.Response:
        """A confirm link: the address gets notices from now on."""
        player, token = request.query.get("p", ""), request.query.get("t", "")
        prefs = await self.store.prefs(player) if player else {}
        if not token or not secrets.compare_digest(prefs.get("confirm", ""), token):
            return _page("This link is not (or no longer) valid.", 404)
        await self.store.set_prefs(player, {"email_ok": "1"}, drop=("confirm",))
        return _page(f"{prefs.get('email')} gets Moose House notices now.")

    async def unsubscribe(self, request: web.Request) -> web.Response:
        """An unsubscribe link (GET, or a mail client's one-click POST): no more mail."""
        player, token = request.query.get("p", ""), request.query.get("t", "")
        prefs = await self.store.prefs(player) if player else {}
        if not token or not secrets.compare_digest(prefs.get("unsub", ""), token):
            return _page("This link is not (or no longer) valid.", 404)
        await self.store.set_prefs(player, {}, drop=("email", "email_ok", "confirm", "unsub"))
        return _page("No more mail from Moose House.")


def _page(text: str, status: int = 200) -> web.Response:
    """A one-line answer to a mail's link."""
    return web.Response(text=text, status=status, content_type="text/plain")


NOTIFY = web.AppKey("notify", NotifyHandlers)


def add_routes(app: web.Application) -> None:
    """The HTTP side; the handlers are looked up once the instance has built them."""

    def route(name: str) -> Any:
        async def handle(request: web.Request) -> web.StreamResponse:
            handlers = request.app.get(NOTIFY)
            if handlers is None:
                raise web.HTTPServiceUnavailable(text="starting")
            answer: web.StreamResponse = await getattr(handlers, name)(request)
            return answer

        return handle

    app.router.add_get("/notify/key", route("key"))
    app.router.add_get("/sw.js", route("worker"))
    app.router.add_get("/notify/confirm", route("confirm"))
    app.router.add_route("*", "/notify/unsubscribe", route("unsubscribe"))
