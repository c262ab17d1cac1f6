// A Colyseus 0.18 server playing a small 4-seat turn game, for bench/colyseus/run.sh.
//
// The game is a shedding game of 52 cards: 7 each, one face up. On its turn a seat
// plays a card of its hand of the face-up card's suit or rank, or draws. Every move
// is validated (whose turn, the card in the hand, the card legal); the mover gets
// `moved` with the move's sequence number, then every seat gets an `event` with its
// own view: its hand, the other hands' sizes, the face-up card, whose turn, and
// its legal moves when it is to act. A game ends after GAME_MOVES moves (the
// socket ceiling's length of a game), when a hand or the stock is empty; its
// players then leave and join again, as the moose load test's players queue again.
//
// Usage: node server.mjs PORT
import { Room, Server } from "@colyseus/core";
import { WebSocketTransport } from "@colyseus/ws-transport";

const SEATS = 4;
const HAND = 7;
const GAME_MOVES = 52;

function shuffled() {
  const deck = Array.from({ length: 52 }, (_, i) => i);
  for (let i = deck.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1));
    [deck[i], deck[j]] = [deck[j], deck[i]];
  }
  return deck;
}

const fits = (card, top) => card % 13 === top % 13 || Math.floor(card / 13) === Math.floor(top / 13);

class TurnRoom extends Room {
  maxClients = SEATS;

  onCreate() {
    this.seats = [];
    this.hands = [];
    this.seq = 0;
    this.turn = 0;
    this.over = false;
    this.onMessage("move", (client, msg) => this.move(client, msg));
  }

  onJoin(client) {
    this.seats.push(client);
    if (this.seats.length === SEATS) {
      this.lock();
      this.deck = shuffled();
      this.hands = this.seats.map(() => this.deck.splice(0, HAND));
      this.top = this.deck.pop();
      this.seats.forEach((c, seat) => c.send("match", { seat, players: SEATS }));
      this.broadcastEvent({ kind: "start", dealer: 0 });
    }
  }

  onLeave(client) {
    const seat = this.seats.indexOf(client);
    if (seat >= 0 && !this.over) this.over = true; // a game that lost a seat ends
  }

  legal(seat) {
    const moves = this.hands[seat].filter((c) => fits(c, this.top));
    moves.push(-1); // draw
    return moves;
  }

  move(client, msg) {
    const seat = this.seats.indexOf(client);
    const id = msg?.id;
    const card = msg?.card;
    let code = null;
    if (this.over || this.seats.length < SEATS) code = "no_game";
    else if (seat !== this.turn) code = "not_your_turn";
    else if (!Number.isInteger(card) || card < -1 || card > 51) code = "bad_move";
    else if (card >= 0 && (!this.hands[seat].includes(card) || !fits(card, this.top))) code = "illegal_move";
    if (code !== null) {
      client.send("error", { id, code });
      return;
    }
    const hand = this.hands[seat];
    if (card >= 0) {
      hand.splice(hand.indexOf(card), 1);
      this.top = card;
    } else {
      hand.push(this.deck.pop());
    }
    this.seq += 1;
    client.send("moved", { id, seq: this.seq });
    this.turn = (this.turn + 1) % SEATS;
    this.over = this.seq >= GAME_MOVES || hand.length === 0 || this.deck.length === 0;
    this.broadcastEvent({ kind: "move", seat, card });
  }

  broadcastEvent(event) {
    const sizes = this.hands.map((h) => h.length);
    this.seats.forEach((c, seat) => {
      c.send("event", {
        seq: this.seq,
        event,
        view: { hand: this.hands[seat], sizes, top: this.top, stock: this.deck.length, turn: this.turn, over: this.over },
        legal: !this.over && seat === this.turn ? this.legal(seat) : null,
        server_time: Date.now(),
      });
    });
  }
}

const port = Number(process.argv[2] || 2567);
const server = new Server({ transport: new WebSocketTransport(), greet: false, gracefullyShutdown: true });
server.define("turn", TurnRoom);
await server.listen(port, "127.0.0.1");
console.log(`colyseus listening on ${port}`);
