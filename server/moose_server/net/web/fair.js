// @ts-check
// Provably fair deals in the browser (PROTOCOL.md, "Provably fair deals"): the seed the
// page sends, and the check of a finished game's deal from its record alone (Web Crypto).
//
// The same scheme as moose.fair and `moose verify`: HMAC-SHA256 keyed by the server
// seed over "moose-deal-v1\n" + the seeds joined by "\n" + a 4-byte counter gives
// 32-bit words; draw(n) skips the words past the last whole n. The dealer is
// draw(players), then Fisher-Yates shuffles the canonical order of RULES.md section 1.

export const SCHEME = "moose-deal-v1";
const ROOMS = ["kitchen", "living", "bedroom", "bathroom"];
const copies = (code, n) => Array(n).fill(code);
export const CARDS = [
  ...ROOMS.flatMap((t) => copies(`room:${t}`, 5)),
  ...ROOMS.flatMap((t) => copies(`moose:${t}`, 5)),
  ...copies("house", 10),
  ...copies("door", 5),
  ...copies("trap", 3),
];
const WORD = 2 ** 32;

const toHex = (bytes) => Array.from(new Uint8Array(bytes), (b) => b.toString(16).padStart(2, "0")).join("");

function fromHex(text) {
  if (typeof text !== "string" || !/^([0-9a-f]{2})+$/i.test(text)) throw new Error("the server seed is not hex");
  return Uint8Array.from(text.match(/../g), (pair) => parseInt(pair, 16));
}

// A seed for our seat: 48 hex digits from the browser's random source.
export function randomSeed() {
  return toHex(crypto.getRandomValues(new Uint8Array(24)));
}

export async function commitment(serverSeed) {
  return toHex(await crypto.subtle.digest("SHA-256", serverSeed));
}

// The stream's draws, one HMAC block (8 words) at a time.
class Draws {
  constructor(key, material) {
    this.key = key;
    this.material = material;
    this.k = 0;
    this.words = [];
  }

  async word() {
    if (!this.words.length) {
      const msg = new Uint8Array(this.material.length + 4);
      msg.set(this.material);
      new DataView(msg.buffer).setUint32(this.material.length, this.k++);
      const block = new DataView(await crypto.subtle.sign("HMAC", this.key, msg));
      for (let i = 0; i < 32; i += 4) this.words.push(block.getUint32(i));
    }
    return this.words.shift();
  }

  async draw(n) {
    const limit = WORD - (WORD % n);
    for (;;) {
      const u = await this.word();
      if (u < limit) return u % n;
    }
  }
}

// The dealer and the deck (top first) the scheme gives.
export async function dealOf(serverSeed, seeds, players) {
  const key = await crypto.subtle.importKey("raw", serverSeed, { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
  const material = new TextEncoder().encode(`${SCHEME}\n${seeds.join("\n")}`);
  const draws = new Draws(key, material);
  const dealer = await draws.draw(players);
  const deck = CARDS.slice();
  for (let i = deck.length - 1; i > 0; i--) {
    const j = await draws.draw(i + 1);
    [deck[i], deck[j]] = [deck[j], deck[i]];
  }
  return { dealer, deck };
}

// What in a record's deal does not follow from its seeds: [] for a fair deal. Throws
// when the record holds no deal (a fixed test deck) or the browser has no Web Crypto.
export async function verifyDeal(record) {
  const deal = record && record.deal;
  if (!deal || deal.scheme !== SCHEME) throw new Error("this record has no deal to check");
  if (!globalThis.crypto || !crypto.subtle) throw new Error("this page cannot reach Web Crypto (it needs https)");
  const seeds = deal.seeds;
  if (!Array.isArray(seeds) || seeds.length !== record.players) return [`deal.seeds has ${seeds && seeds.length} seeds for ${record.players} seats`];
  const serverSeed = fromHex(deal.server_seed);
  const out = [];
  const want = await commitment(serverSeed);
  if (deal.commitment !== want) out.push(`the commitment is not SHA-256 of the server seed (${want})`);
  const { dealer, deck } = await dealOf(serverSeed, seeds, record.players);
  if (record.dealer !== dealer) out.push(`the dealer is seat ${record.dealer}, the seeds give seat ${dealer}`);
  deck.forEach((card, i) => {
    if (!record.deck || record.deck[i] !== card) out.push(`deck[${i}] is ${record.deck && record.deck[i]}, the seeds give ${card}`);
  });
  return out;
}
