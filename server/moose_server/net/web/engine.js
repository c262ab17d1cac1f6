// @ts-check
// The few rules the page plays itself (RULES.md, the contract; moose/rules.py is the
// server's engine): replaying a finished game's record, and why a card of your hand
// cannot be played now.
//
// A live game never needs them: the server sends each seat its view and its legal
// moves. A replay does: a record is the deck and the moves, and every house at every
// step follows from them. Doing that here rather than on the server keeps the public
// API as it is (one record, about 2 KB) and replays a private table's game too, whose
// record only its players and code holders may read (over the socket).
// tests/test_web_replay.py checks every step against moose.rules on many games.
//
// A state: {n, dealer, draw (top card last), hands, houses: [{house, rooms: [{type,
// cover}]}] (the shape of a view's houses), discard, turn, drew, pending, over}.

const HAND_SIZE = 4;
const MAX_OPEN_ROOMS = 3;

// The dealt game of a record: 4 cards to each seat from the first player, then the
// first player's draw.
export function deal(record) {
  const n = record.players;
  const first = (record.dealer + 1) % n;
  const hands = [...Array(n)].map(() => []);
  let pos = 0;
  for (let round = 0; round < HAND_SIZE; round += 1) {
    for (let k = 0; k < n; k += 1) hands[(first + k) % n].push(record.deck[pos++]);
  }
  const s = {
    n, dealer: record.dealer, draw: record.deck.slice(pos).reverse(), hands,
    houses: [...Array(n)].map(() => ({ house: false, rooms: [] })),
    discard: [], turn: first, drew: false, pending: null, over: false,
  };
  startTurn(s);
  return s;
}

function startTurn(s) {
  s.drew = s.draw.length > 0;
  if (s.drew) s.hands[s.turn].push(s.draw.pop());
}

export function toAct(s) {
  if (s.over) return null;
  return s.pending ? s.pending.seat : s.turn;
}

function opponents(n, seat) {
  return [...Array(n - 1).keys()].map((k) => (seat + 1 + k) % n);
}

function openRooms(house) {
  return house.rooms.filter((r) => r.cover === null).length;
}

// Every legal play (RULES.md 3.3 a-d) of `card` by `seat`, given the houses.
export function plays(houses, seat, card) {
  const [kind, type] = card.split(":");
  const others = opponents(houses.length, seat);
  const out = [];
  if (kind === "moose") {
    for (const t of others) {
      if (!houses[t].house) continue;
      houses[t].rooms.forEach((r, i) => {
        if (r.cover === null && r.type === type) out.push({ action: "play", card, target: t, room: i });
      });
    }
  } else if (kind === "room" || kind === "house") {
    for (const t of others) {
      const free = kind === "room" ? openRooms(houses[t]) < MAX_OPEN_ROOMS : !houses[t].house;
      if (free) out.push({ action: "play", card, target: t });
    }
  } else if (kind === "door") {
    houses[seat].rooms.forEach((r, i) => {
      if (r.cover === null) out.push({ action: "play", card, room: i });
    });
  }
  return out;
}

// Why `seat` cannot play `card` now, as an i18n key and its parameters; null if it can.
export function whyNot(houses, seat, card) {
  if (plays(houses, seat, card).length) return null;
  const [kind, type] = card.split(":");
  if (kind === "trap") return ["why_trap", {}];
  if (kind === "door") return ["why_door", {}];
  if (kind === "house") return ["why_house", {}];
  if (kind === "room") return ["why_room", {}];
  const housed = opponents(houses.length, seat).some((t) => houses[t].house);
  return housed ? ["why_moose_room", { type }] : ["why_moose_house", {}];
}

function hasPlay(s, seat) {
  return s.hands[seat].some((card) => plays(s.houses, seat, card).length > 0);
}

// The legal moves of the seat to act, in the engine's order.
export function legalMoves(s) {
  if (s.over) return [];
  if (s.pending) return [{ action: "trap" }, { action: "allow" }];
  const cards = [...new Set(s.hands[s.turn])].sort();
  const found = cards.flatMap((card) => plays(s.houses, s.turn, card));
  if (found.length) return found;
  if (s.drew) return cards.map((card) => ({ action: "discard", card }));
  return [{ action: "pass" }];
}

function same(a, b) {
  return ["action", "card", "target", "room"].every((k) => a[k] === b[k]);
}

function take(hand, card) {
  hand.splice(hand.indexOf(card), 1);
}

// The state after `move`; throws when the rules do not allow it there.
export function step(state, move) {
  if (!legalMoves(state).some((m) => same(m, move))) throw new Error("illegal move");
  const s = structuredClone(state);
  const actor = toAct(s);
  if (s.pending) {
    answer(s, move.action === "trap");
  } else if (move.action === "discard") {
    take(s.hands[actor], move.card);
    s.discard.push(move.card);
  } else if (move.action === "play") {
    take(s.hands[actor], move.card);
    place(s, actor, move);
  }
  if (!s.pending) finish(s);
  return s;
}

function place(s, actor, move) {
  const kind = move.card.split(":")[0];
  if (kind === "house") s.houses[move.target].house = true;
  else if (kind === "room") s.houses[move.target].rooms.push({ type: move.card.slice(5), cover: null });
  else if (kind === "door") s.houses[actor].rooms[move.room].cover = "door";
  else if (s.hands[move.target].includes("trap")) {
    s.pending = { seat: move.target, attacker: actor, room: move.room, card: move.card };
  } else s.houses[move.target].rooms[move.room].cover = "moose";
}

function answer(s, trap) {
  const { seat, room, card } = s.pending;
  s.pending = null;
  if (!trap) {
    s.houses[seat].rooms[room].cover = "moose";
    return;
  }
  take(s.hands[seat], "trap");
  s.discard.push(card, "trap");
  if (s.draw.length) s.hands[seat].push(s.draw.pop());
}

function finish(s) {
  const stuck = () => s.draw.length === 0 && ![...Array(s.n).keys()].some((k) => hasPlay(s, k));
  if (s.hands.every((hand) => hand.length === 0) || stuck()) {
    s.over = true;
    return;
  }
  s.turn = (s.turn + 1) % s.n;
  startTurn(s);
}

// Each seat's score: moose in its house plus moose cards in its hand.
export function scores(s) {
  return s.houses.map((house, k) =>
    house.rooms.filter((r) => r.cover === "moose").length + s.hands[k].filter((c) => c.startsWith("moose:")).length);
}

// The winning seats: the lowest score, then the most doors (RULES.md 5.3).
export function winners(s) {
  if (!s.over) return [];
  const sc = scores(s);
  const doors = s.houses.map((house) => house.rooms.filter((r) => r.cover === "door").length);
  const tied = sc.map((_, k) => k).filter((k) => sc[k] === Math.min(...sc));
  const most = Math.max(...tied.map((k) => doors[k]));
  return tied.filter((k) => doors[k] === most);
}

// Every state of a record, from the deal, and who made each move. `broken`: the index
// of the first move the rules refuse (the states stop before it), else null.
export function replay(record) {
  const states = [deal(record)];
  const actors = [];
  let broken = null;
  for (const [i, move] of record.moves.entries()) {
    const before = states[states.length - 1];
    try {
      states.push(step(before, move));
    } catch {
      broken = i;
      break;
    }
    actors.push(toAct(before));
  }
  if (broken === null && !states[states.length - 1].over) broken = record.moves.length;
  return { states, actors, broken };
}
