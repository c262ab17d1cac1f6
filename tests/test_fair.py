"""Provably fair deals (moose.fair): PROTOCOL.md's worked example, verify, `moose verify`."""

from __future__ import annotations

import hashlib
import hmac
import json
import random
import re
from pathlib import Path
from typing import Any

import pytest

from moose import cli, fair, rules
from moose import record as records

from helpers import random_game

DOC = Path(__file__).resolve().parent.parent / "PROTOCOL.md"
RULES_DOC = Path(__file__).resolve().parent.parent / "RULES.md"
SERVER_SEED = bytes(range(32))
SEEDS = ["", "alice likes moose", ""]


def fair_record(server_seed: bytes, seeds: list[str], moves: bool = True) -> dict[str, Any]:
    """A finished game's record dealt by the scheme from `server_seed` and `seeds`."""
    dealer, deck = fair.deal(server_seed, seeds, len(seeds))
    state = rules.new_game(len(seeds), deck=deck, dealer=dealer)
    rng = random.Random(len(seeds))
    played = []
    while moves and not state.over:
        move = rng.choice(rules.legal_moves(state))
        played.append(move)
        state = rules.apply(state, move)
    rec = records.from_game(state, played).to_dict()
    rec["deal"] = {
        "scheme": fair.SCHEME,
        "commitment": fair.commitment(server_seed),
        "server_seed": server_seed.hex(),
        "seeds": list(seeds),
    }
    return rec


# -- the worked example ------------------------------------------------------------


def test_the_worked_example_of_protocol_md() -> None:
    doc = DOC.read_text()
    example = doc[doc.index("**Worked example**") :]
    example = example[: example.index("\n## ")]
    commitment = re.search(r"- commitment: `([0-9a-f]{64})`", example)
    block = re.search(r"- first block \(k = 0\): `([0-9a-f]{64})`", example)
    dealer = re.search(r"mod 3 = \*\*(\d)\*\*", example)
    cards = re.findall(r"`([a-z:]+)`", example[example.index("the deck, top first") :])
    assert commitment and block and dealer and len(cards) == 10
    assert SERVER_SEED.hex() in example and '`["", "alice likes moose", ""]`' in example
    assert fair.commitment(SERVER_SEED) == commitment.group(1)
    assert fair.material(SEEDS) == b"moose-deal-v1\n\nalice likes moose\n"
    first = hmac.new(SERVER_SEED, fair.material(SEEDS) + bytes(4), hashlib.sha256)
    assert first.hexdigest() == block.group(1)
    got_dealer, deck = fair.deal(SERVER_SEED, SEEDS, 3)
    assert got_dealer == int(dealer.group(1)) == int(block.group(1)[:8], 16) % 3
    assert deck[:10] == cards


def test_the_deal_by_hand_from_the_scheme_text() -> None:
    """An independent reading of the scheme, from the words of PROTOCOL.md."""
    words: list[int] = []
    for k in range(40):
        digest = hmac.new(SERVER_SEED, fair.material(SEEDS) + k.to_bytes(4, "big"), "sha256")
        words += [int.from_bytes(digest.digest()[i : i + 4], "big") for i in range(0, 32, 4)]
    it = iter(words)

    def draw(n: int) -> int:
        return next(u for u in it if u < 2**32 - (2**32 % n)) % n

    dealer = draw(3)
    copies = [
        *((f"room:{t}", 5) for t in rules.ROOM_TYPES),
        *((f"moose:{t}", 5) for t in rules.ROOM_TYPES),
        ("house", 10),
        ("door", 5),
        ("trap", 3),
    ]
    deck = [card for code, k in copies for card in [code] * k]
    for i in range(57, 0, -1):
        j = draw(i + 1)
        deck[i], deck[j] = deck[j], deck[i]
    assert (dealer, deck) == fair.deal(SERVER_SEED, SEEDS, 3)


def test_rules_md_writes_the_canonical_order() -> None:
    text = RULES_DOC.read_text()
    order = "`room:kitchen` x5, `room:living` x5, `room:bedroom` x5, `room:bathroom` x5"
    assert order in text.replace("\n", " ")
    assert '"deal"' in text and "moose-deal-v1" in text
    assert [c for i, c in enumerate(rules.CARDS) if i == 0 or rules.CARDS[i - 1] != c] == [
        *(f"room:{t}" for t in rules.ROOM_TYPES),
        *(f"moose:{t}" for t in rules.ROOM_TYPES),
        "house",
        "door",
        "trap",
    ]


def test_draw_rejects_the_words_past_the_last_whole_n() -> None:
    draws = fair.Draws(b"k", [""])
    draws._words = iter([2**32 - 1, 2**32 - 2, 7])  # 2**32 - 1 >= 2**32 - 2**32 % 3
    assert draws.draw(3) == (2**32 - 2) % 3
    assert draws.draw(3) == 1


@pytest.mark.parametrize("seed", ["", "x" * 65, "tab\there", "é", "new\nline", 5, None])
def test_bad_seeds_are_refused(seed: object) -> None:
    with pytest.raises(ValueError):
        fair.check_seed(seed)


def test_good_seeds_pass() -> None:
    for seed in ("a", " ", "~" * 64, "0123 abc XYZ !#$%&'()*+,-./:;<=>?@[\\]^_`{|}"):
        assert fair.check_seed(seed) == seed


# -- verify ----------------------------------------------------------------------


def test_verify_says_fair_for_a_fair_record() -> None:
    for players in range(2, 7):
        seeds = [f"seat {i}" if i % 2 else "" for i in range(players)]
        assert fair.verify(fair_record(bytes([players]) * 32, seeds)) == []


def test_verify_fails_whenever_any_part_of_the_deal_is_changed() -> None:
    """A seeded loop of games (hypothesis is not among the test dependencies)."""
    rng = random.Random(27)
    for case in range(60):
        players = rng.randint(2, 6)
        seeds = [rng.choice(["", "a", "moose", f"{rng.random()}"]) for _ in range(players)]
        server_seed = rng.randbytes(32)
        rec = fair_record(server_seed, seeds, moves=False)
        assert fair.verify(rec) == []
        what = case % 5
        bad = json.loads(json.dumps(rec))
        if what == 0:  # another server seed, with its own commitment
            other = bytearray(server_seed)
            other[rng.randrange(32)] ^= 1 << rng.randrange(8)
            bad["deal"]["server_seed"] = bytes(other).hex()
        elif what == 1:  # the server seed, but the commitment sent before was another's
            bad["deal"]["commitment"] = fair.commitment(rng.randbytes(32))
        elif what == 2:  # one seed changed
            seat = rng.randrange(players)
            bad["deal"]["seeds"][seat] += "!"
        elif what == 3:  # another dealer
            bad["dealer"] = (rec["dealer"] + rng.randrange(1, players)) % players
        else:  # one card swapped with a different one
            deck = bad["deck"]
            i = rng.randrange(58)
            j = next(j for j in rng.sample(range(58), 58) if deck[j] != deck[i])
            deck[i], deck[j] = deck[j], deck[i]
        assert fair.verify(bad), (case, what)


def test_verify_names_what_differs() -> None:
    rec = fair_record(SERVER_SEED, SEEDS, moves=False)
    rec["dealer"] = 0
    rec["deck"][0], rec["deck"][1] = rec["deck"][1], rec["deck"][0]
    said = fair.verify(rec)
    assert said == [
        "the dealer is seat 0, the seeds give seat 2",
        "deck[0] is 'moose:bedroom', the seeds give 'house'",
        "deck[1] is 'house', the seeds give 'moose:bedroom'",
    ]


def test_verify_refuses_a_record_without_a_deal() -> None:
    state, moves = next((s, []) for s, _ in random_game(2, 1))
    with pytest.raises(ValueError, match="no 'deal'"):
        fair.verify(records.from_game(state, moves).to_dict())


# -- records and `moose verify` --------------------------------------------------


def test_a_record_with_a_deal_loads_replays_and_dumps_it() -> None:
    rec = fair_record(SERVER_SEED, SEEDS)
    loaded = records.loads(json.dumps(rec))
    assert records.replay(loaded).ok
    assert loaded.to_dict()["deal"] == rec["deal"]
    with pytest.raises(records.RecordError, match="'deal' must be a map"):
        records.loads(json.dumps({**rec, "deal": "yes"}))


def verify(tmp_path: Path, data: Any, capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    """`moose verify FILE`: exit code and output."""
    path = tmp_path / "game.json"
    path.write_text(data if isinstance(data, str) else json.dumps(data))
    code = cli.main(["verify", str(path)])
    return code, capsys.readouterr().out


def test_moose_verify_exit_codes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rec = fair_record(SERVER_SEED, SEEDS)
    assert verify(tmp_path, rec, capsys) == (0, "fair\n")
    rec["deal"]["seeds"][1] = "bob likes moose"
    code, out = verify(tmp_path, rec, capsys)
    assert code == 1 and out.startswith("differs: ")
    assert all(line.startswith("differs: ") for line in out.splitlines())
    code, out = verify(tmp_path, "{not json", capsys)
    assert code == 2 and out.startswith("cannot verify: the record is not valid JSON")
    del rec["deal"]
    code, out = verify(tmp_path, rec, capsys)
    assert code == 2 and "no 'deal'" in out


# -- the page's fair.js, under Node (the browser test checks it in Chromium) ---------

WEB_FAIR = Path(__file__).resolve().parent.parent / "server/moose_server/net/web/fair.js"
NODE_CHECK = """
import { dealOf, verifyDeal } from "%s";
const input = JSON.parse(process.argv[2]);
const seed = Uint8Array.from(Buffer.from(input.server_seed, "hex"));
const dealt = await dealOf(seed, input.seeds, input.seeds.length);
const verdicts = [];
for (const record of input.records) verdicts.push(await verifyDeal(record));
console.log(JSON.stringify({ dealt, verdicts }));
"""


@pytest.mark.slow  # runs node
def test_the_pages_fair_js_deals_and_verifies_as_moose_fair(tmp_path: Path) -> None:
    import shutil
    import subprocess

    node = shutil.which("node")
    if node is None:
        pytest.skip("no node")
    rec = fair_record(SERVER_SEED, SEEDS, moves=False)
    tampered = json.loads(json.dumps(rec))
    tampered["deal"]["seeds"][0] = "x"
    swapped = json.loads(json.dumps(rec))
    swapped["deck"][0], swapped["deck"][1] = swapped["deck"][1], swapped["deck"][0]
    script = tmp_path / "check.mjs"
    script.write_text(NODE_CHECK % WEB_FAIR.as_uri())
    payload = {
        "server_seed": SERVER_SEED.hex(),
        "seeds": SEEDS,
        "records": [rec, tampered, swapped],
    }
    out = subprocess.run(
        [node, str(script), json.dumps(payload)],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    got = json.loads(out.stdout)
    assert (got["dealt"]["dealer"], got["dealt"]["deck"]) == fair.deal(SERVER_SEED, SEEDS, 3)
    assert got["verdicts"][0] == [] and got["verdicts"][1] and len(got["verdicts"][2]) == 2
