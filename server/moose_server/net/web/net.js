// @ts-check
// The socket: PROTOCOL.md over JSON text frames, with the session kept across reloads.
//
// `Net` says hello (with the token from localStorage when there is one),
// matches each answer to its request by `id`, and hands every other message
// to `onMessage`. When the socket drops it reconnects by itself (`backoff`:
// full jitter up to 5 s; at once after close code 1012, then within RESTART ms
// while the service restarts; never after 4003 or 4004), says hello with its token again
// and calls `onResume`, where the page syncs its game from the last seq seen. A new
// session (a login, another name, a logout) is said hello on a fresh socket first
// (`switchTo`): only once welcomed does it replace the socket in use.

const TOKEN = "moose.token";
export const BACKOFF_BASE = 100; // ms: the window of the first attempt
export const BACKOFF_CAP = 5000; // ms: the widest window, however many attempts failed
// After 1012 (the server restarts) the service is back within seconds: try often, so
// that the page is back within a second of it and the outage grace is the player's.
export const RESTART = 500;

// Milliseconds before reconnect attempt `attempt` (from 0): full jitter, drawn evenly
// from [0, min(cap, BACKOFF_BASE * 2^attempt)), as PROTOCOL.md advises every client.
// When an instance dies its pages all lose their socket at once: drawn so, they come
// back spread over the window instead of together, again and again, on the others.
export function backoff(attempt, cap = BACKOFF_CAP, random = Math.random) {
  return random() * Math.min(cap, BACKOFF_BASE * 2 ** attempt);
}

export class ServerError extends Error {
  constructor(code, message) {
    super(message);
    this.code = code;
  }
}

export class Net {
  constructor(handlers) {
    this.on = handlers; // {onMessage, onOpen, onResume, onStatus, onWelcome}
    this.ws = null;
    this.nextId = 1;
    this.pending = new Map();
    this.offset = 0; // server clock minus ours, ms
    this.welcome = null;
    this.name = null; // the name to say hello with when there is no token
    this.tries = 0;
    this.restarting = false; // closed with 1012 and not connected since
    this.retryAt = 0;
    this.opened = null;
    this.taken = null; // a name asked for that an account holds (offer to log in)
  }

  get token() {
    return localStorage.getItem(TOKEN);
  }

  forget() {
    localStorage.removeItem(TOKEN);
  }

  now() {
    return Date.now() + this.offset;
  }

  // Connect and say hello; resolves with the welcome.
  open(name) {
    if (name) this.name = name;
    this.opened = new Promise((resolve, reject) => this.connect(resolve, reject));
    return this.opened;
  }

  // A new session on a fresh socket (another name, a login, a logout): the socket in
  // use stays until the new hello is welcomed, so a refused name or password changes
  // nothing and the page stays connected. Resolves with the welcome.
  switchTo(fields) {
    return new Promise((resolve, reject) => {
      const ws = new WebSocket(socketUrl());
      const id = this.nextId++;
      let settled = false;
      const fail = (err) => {
        if (settled) return;
        settled = true;
        ws.onclose = null;
        ws.close(1000);
        reject(err);
      };
      ws.onopen = () => ws.send(JSON.stringify({ type: "hello", id, protocol: 1, ...fields }));
      ws.onmessage = (e) => {
        let msg;
        try {
          msg = JSON.parse(e.data);
        } catch {
          return;
        }
        if (msg.id !== id || settled) return; // nothing is sent to a socket before its welcome
        if (msg.type === "error") {
          fail(new ServerError(msg.code, msg.message));
          return;
        }
        settled = true;
        this.adopt(ws, msg);
        resolve(msg);
      };
      ws.onclose = () => fail(new ServerError("lost", "connection lost"));
    });
  }

  // A guest session: the name asked for, or (when an account holds it) "guest", then a
  // random one; `taken` says which asked-for name an account holds, to offer a login.
  async newGuest(name) {
    this.taken = null;
    for (const candidate of guestNames(name)) {
      try {
        return await this.switchTo({ name: candidate });
      } catch (err) {
        if (err.code !== "name_taken") throw err;
        this.taken = this.taken || candidate;
      }
    }
    throw new ServerError("name_taken", "every name tried is an account's");
  }

  adopt(ws, welcome) {
    this.close();
    for (const [, p] of this.pending) p.reject(new ServerError("lost", "new session"));
    this.pending.clear();
    this.ws = ws;
    this.name = welcome.name;
    this.tries = 0;
    this.restarting = false;
    this.welcome = welcome;
    localStorage.setItem(TOKEN, welcome.token);
    if (this.on.onWelcome) this.on.onWelcome(welcome);
    ws.onmessage = (e) => this.receive(e.data);
    ws.onclose = (e) => this.dropped(ws, e, null);
    this.ping().catch(() => {});
    this.on.onOpen();
    this.on.onStatus("open");
  }

  // A new token for this session (register, change of password, logout everywhere).
  keep(token, fields = {}) {
    localStorage.setItem(TOKEN, token);
    this.welcome = { ...this.welcome, ...fields, token };
  }

  close() {
    if (this.ws) {
      this.ws.onclose = null;
      this.ws.close(1000);
      this.ws = null;
    }
  }

  connect(resolve, reject) {
    const ws = new WebSocket(socketUrl());
    this.ws = ws;
    this.on.onStatus("connecting");
    ws.onmessage = (e) => this.receive(e.data);
    ws.onopen = () => this.hello().then((w) => {
      this.tries = 0;
      this.restarting = false;
      this.on.onStatus("open");
      resolve?.(w);
      resolve = null;
    }, (err) => { reject?.(err); reject = null; });
    ws.onclose = (e) => this.dropped(ws, e, reject);
  }

  dropped(ws, e, reject) {
    for (const [, p] of this.pending) p.reject(new ServerError("lost", "connection lost"));
    this.pending.clear();
    if (this.ws !== ws) return;
    // Banned (4003) or the session ended by a moderator (4004): the error said
    // why; coming straight back would only be refused or ended again.
    if (e.code === 4003 || e.code === 4004) {
      this.on.onStatus("lost");
      reject?.(new ServerError("lost", "connection closed"));
      return;
    }
    if (e.code === 1012) {
      this.restarting = true;
      this.tries = 0;
    }
    const wait = e.code === 1012 ? 0 : backoff(this.tries, this.restarting ? RESTART : BACKOFF_CAP);
    this.tries += 1;
    this.retryAt = Date.now() + wait;
    this.on.onStatus("lost");
    setTimeout(() => this.connect(null, null), wait);
  }

  // hello, with the ping and the page's first requests sent at once behind it:
  // the server answers a socket's frames in order, so none waits for the welcome.
  async hello() {
    const token = this.token;
    let w;
    try {
      w = await (token ? this.pipelined({ protocol: 1, token }) : this.guestHello());
    } catch (err) {
      if (!token || !["bad_token", "token_expired", "token_revoked"].includes(err.code)) throw err;
      this.forget(); // an old session (or one logged out everywhere): start a new one
      w = await this.guestHello();
    }
    localStorage.setItem(TOKEN, w.token);
    const first = !this.welcome;
    this.welcome = w;
    if (this.on.onWelcome) this.on.onWelcome(w);
    if (!first) this.on.onResume(w);
    return w;
  }

  // hello as a guest on this socket (it may say hello again after a refusal): the name,
  // else "guest", else a random one, as in `newGuest`.
  async guestHello() {
    this.taken = null;
    for (const name of guestNames(this.name)) {
      try {
        return await this.pipelined({ protocol: 1, name });
      } catch (err) {
        if (err.code !== "name_taken") throw err;
        this.taken = this.taken || name;
      }
    }
    throw new ServerError("name_taken", "every name tried is an account's");
  }

  pipelined(fields) {
    const welcome = this.request("hello", fields);
    this.ping().catch(() => {});
    this.on.onOpen();
    return welcome;
  }

  async ping() {
    const t0 = Date.now();
    const pong = await this.request("ping");
    this.offset = pong.server_time - (t0 + Date.now()) / 2;
  }

  request(type, fields = {}) {
    const id = this.nextId++;
    const msg = { type, id, ...fields };
    return new Promise((resolve, reject) => {
      if (!this.ws || this.ws.readyState !== WebSocket.OPEN) {
        reject(new ServerError("lost", "not connected"));
        return;
      }
      this.pending.set(id, { resolve, reject });
      this.ws.send(JSON.stringify(msg));
    });
  }

  receive(data) {
    let msg;
    try {
      msg = JSON.parse(data);
    } catch {
      return;
    }
    if (this.on.trace) this.on.trace(msg);
    const p = msg.id !== undefined && msg.type !== "event" ? this.pending.get(msg.id) : null;
    if (p) {
      this.pending.delete(msg.id);
      if (msg.type === "error") p.reject(new ServerError(msg.code, msg.message));
      else p.resolve(msg);
      return;
    }
    this.on.onMessage(msg);
  }
}

function socketUrl() {
  const scheme = location.protocol === "https:" ? "wss" : "ws";
  return `${scheme}://${location.host}/ws`;
}

function guestNames(name) {
  const random = `guest-${Math.random().toString(16).slice(2, 10)}`;
  return [...new Set([name || "guest", "guest", random])];
}
