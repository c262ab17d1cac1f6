// The bot's strategy: edit this file to make the bot your own.
//
// choose(view, legal) gets the seat's view (RULES.md section 6: every house, the
// discard pile, hand sizes, your own hand; never a hidden card) and the legal
// moves (RULES.md section 7), and returns one of the legal moves.

const pick = (moves) => moves[Math.floor(Math.random() * moves.length)];

/** A trap for every moose; then a moose on someone, a door on a threatened
 * room, any other play; discard a moose first and a trap last. */
export function choose(view, legal) {
  const trap = legal.find((m) => m.action === "trap");
  if (trap) return trap;
  const plays = legal.filter((m) => m.action === "play");
  const moose = plays.filter((m) => m.card.startsWith("moose:"));
  if (moose.length) return pick(moose);
  const doors = plays.filter((m) => m.card === "door");
  if (doors.length) return pick(doors);
  if (plays.length) return pick(plays);
  const discards = legal.filter((m) => m.action === "discard");
  const rank = (m) => (m.card.startsWith("moose:") ? 0 : m.card === "trap" ? 2 : 1);
  discards.sort((a, b) => rank(a) - rank(b));
  return discards[0] ?? legal[0];
}
