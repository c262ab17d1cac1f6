"""Facts documented once, checked against the code that holds them.

deploy/README.md's Redis key table against every key `storage/keys.py` can build,
its settings table against `Settings`, PROTOCOL.md's error table against the
codes the server can send, and PROTOCOL.md's limits and deploy/README.md's
defaults of their settings against the table of limits (limits/rates.py): a key,
a setting, a code or a limit added or changed on one side and not the other
fails here.
"""

from __future__ import annotations

import ast
import dataclasses
import inspect
import re
from collections.abc import Iterator
from pathlib import Path

import msgspec.inspect

from moose import messages, protocol
from moose_server import errors
from moose_server.limits import rates
from moose_server.settings import Settings
from moose_server.storage import keys

ROOT = Path(__file__).resolve().parent.parent
BENCHMARKS = ROOT / "BENCHMARKS.md"
DEPLOY = ROOT / "deploy" / "README.md"
PROTOCOL = ROOT / "PROTOCOL.md"
SERVER = ROOT / "server" / "moose_server"

# Arguments a key builder needs as numbers; every other one is given "<its name>", so
# that a key tagged by its subject reads as the table writes it, `moose:{<player>}:games`.
NUMBERS = {"buckets": 16}
BUCKET = re.compile(r"^b(\d+|<\w+>)$")  # a bucket's tag, written `b<n>` in the table


def section(path: Path, heading: str) -> str:
    """The text of one section (up to the next heading of its level or higher)."""
    level = heading.split(" ", 1)[0]
    text = path.read_text().split(f"\n{heading}\n", 1)[1]
    return re.split(rf"\n#{{1,{len(level)}}} ", text, maxsplit=1)[0]


def kind_of(key: str) -> tuple[str, str]:
    """A key's hash tag (a bucket's as `b<n>`) and its kind, the part after the tag."""
    match = re.fullmatch(r"moose:\{([^}]*)\}:([^:]+)(?::.*)?", key)
    assert match, f"{key!r} is not of the form moose:{{tag}}:kind[:id]"
    tag, kind = match.groups()
    return ("b<n>" if BUCKET.match(tag) else tag), kind


def placeholder(name: str) -> object:
    """What a key builder's argument `name` is given."""
    return NUMBERS.get(name, f"<{name}>")


def built(value: object) -> Iterator[str]:
    """The keys a builder's result holds: a key, a list of them or a keys object."""
    if isinstance(value, str) and value.startswith("moose:"):
        yield value
    elif isinstance(value, list):
        for item in value:
            yield from built(item)
    elif dataclasses.is_dataclass(value) and not isinstance(value, type):
        for name, member in inspect.getmembers(value):
            if name.startswith("_") or isinstance(member, type):
                continue
            if inspect.ismethod(member) and member.__self__ is not value:
                continue  # a classmethod makes another keys object: not a key
            yield from built(call(member) if callable(member) else member)


def call(builder: object) -> object:
    """`builder` called with a placeholder for each of its arguments."""
    assert callable(builder)
    params = inspect.signature(builder).parameters
    return builder(*(placeholder(name) for name in params))


def keys_own(value: object) -> bool:
    """Whether `value` is a function or class of keys.py itself (not one it imports)."""
    return getattr(value, "__module__", None) == keys.__name__


def keys_the_code_builds() -> set[tuple[str, str]]:
    """(tag, kind) of every key `storage/keys.py` builds: its constants, every function
    named `*_key` or `*_keys`, and the keys objects of a game, an arena, moderation."""
    found: set[tuple[str, str]] = set()
    for name, value in vars(keys).items():
        if name.startswith("_") or not (name.isupper() or keys_own(value)):
            continue
        if name == "GameKeys":
            value = value("<id>", "b<n>")
        elif name == "ArenaKeys":
            value = value.of("<arena>")
        elif name == "ModerationKeys":
            value = value()
        elif name == "mm_key":
            continue  # one kind of MM_KEY_KINDS by name: mm_keys() builds them all
        elif inspect.isfunction(value) and name.endswith(("_key", "_keys")):
            value = call(value)
        found |= {kind_of(key) for key in built(value)}
    return found


def keys_the_table_names() -> set[tuple[str, str]]:
    """(tag, kind) of every key in deploy/README.md's Redis key table.

    A row's first cell lists keys; `:kind...` after a full key shares its tag.
    """
    found: set[tuple[str, str]] = set()
    table = section(DEPLOY, "### Redis keys")
    for row in re.findall(r"^\| (.+?) \| .+ \|$", table, re.M):
        tag = None
        for item in re.findall(r"`([^`]+)`", row):
            if item.startswith("moose:{"):
                tag, kind = kind_of(item)
            elif item.startswith(":") and tag is not None:
                kind = item[1:].split(":", 1)[0]
            else:
                continue
            found.add((tag, kind))
    return found


def test_the_redis_key_table_lists_every_key_kind_the_server_builds() -> None:
    code, doc = keys_the_code_builds(), keys_the_table_names()
    assert ("b<n>", "game") in code and ("<player>", "games") in code  # the builders ran
    assert sorted(code - doc) == [], "deploy/README.md's Redis keys table leaves these out"
    assert sorted(doc - code - {("lt", "...")}) == [], "the table names keys keys.py does not"


def test_the_redis_key_section_names_every_pub_sub_channel() -> None:
    text = section(DEPLOY, "### Redis keys")
    channels = [getattr(keys, n).decode() for n in keys.__all__ if n.endswith("_CHANNEL")]
    channels.append(keys.wake_channel("<instance>").decode())
    missing = [c for c in channels if f"`{c}`" not in text]
    assert missing == []


def test_the_settings_table_lists_every_setting_and_only_those() -> None:
    code = {f"MOOSE_{f.name.upper()}" for f in dataclasses.fields(Settings)}
    table = section(DEPLOY, "## Settings")
    doc = set(re.findall(r"^\| `(MOOSE_[A-Z0-9_]+)` \|", table, re.M))
    assert len(code) > 50  # the fields were read
    assert sorted(code - doc) == [], "settings missing from deploy/README.md's table"
    assert sorted(doc - code) == [], "deploy/README.md lists settings the server lacks"


def test_protocol_md_writes_out_the_table_of_rate_limits() -> None:
    # `python -m moose_server.limits.rates` prints the table to paste.
    text = section(PROTOCOL, "## Limits")
    table = text.split(f"\n{rates.HEADER}\n", 1)[1].split("\n\n", 1)[0]
    doc = [line for line in table.splitlines() if not line.startswith("| ---")]
    code = [rates.row(limit, Settings()) for limit in rates.RATES]
    assert doc == code, "PROTOCOL.md's rates differ from limits/rates.py: paste its table"
    assert "A request a limit refuses counts against nothing" in " ".join(text.split())


def test_protocol_md_names_each_hold_with_its_setting_and_code() -> None:
    rows = re.findall(r"^\|.*\|$", section(PROTOCOL, "## Limits"), re.M)
    missing = [
        hold.name
        for hold in rates.HOLDS
        if not any(f"`MOOSE_{hold.setting.upper()}`" in r and f"`{hold.code}`" in r for r in rows)
    ]
    assert missing == []


def test_the_settings_table_gives_each_limit_s_default() -> None:
    table = section(DEPLOY, "## Settings")
    documented = dict(re.findall(r"^\| `MOOSE_([A-Z0-9_]+)` \|[^|]*\| `([^`]+)` \|", table, re.M))
    fields = {s for limit in rates.RATES for s in limit.settings}
    fields |= {hold.setting for hold in rates.HOLDS}
    defaults = Settings()
    wrong = {
        f: documented.get(f.upper())
        for f in sorted(fields)
        if float(documented.get(f.upper(), "nan")) != float(getattr(defaults, f))
    }
    assert wrong == {}, "deploy/README.md's default differs from Settings"


def test_every_code_a_limit_refuses_with_is_a_protocol_code() -> None:
    codes = {limit.code for limit in rates.RATES} | {hold.code for hold in rates.HOLDS}
    assert sorted(codes - protocol.ERROR_CODES) == []


def protocol_error_table() -> set[str]:
    """The codes of PROTOCOL.md's table of stable error codes."""
    table = PROTOCOL.read_text().split("Stable codes:", 1)[1].split("## Close codes", 1)[0]
    return set(re.findall(r"^\| `([a-z_]+)` \|", table, re.M))


def test_the_error_table_is_the_set_of_codes_the_server_may_send() -> None:
    # The socket sends `internal` instead of a code outside ERROR_CODES (net/ws.py).
    doc = protocol_error_table()
    assert {"bad_frame", "internal", "rate_limited"} <= doc  # the table was read
    assert sorted(protocol.ERROR_CODES - doc) == [], "codes missing from PROTOCOL.md's table"
    assert sorted(doc - protocol.ERROR_CODES) == [], "PROTOCOL.md lists codes never sent"


def message_table(heading: str) -> dict[str, str]:
    """A table of PROTOCOL.md's message index after the line `heading`: type -> second cell."""
    text = section(PROTOCOL, "## Message index").split(f"\n{heading}\n", 1)[1]
    table = text.lstrip("\n").split("\n\n", 1)[0]  # up to the next blank line
    return dict(re.findall(r"^\| `([a-z_]+)` \| (.+) \|$", table, re.M))


def documented_field(field: msgspec.inspect.Field) -> str:
    """A Struct field as the client message table writes it: `name`? kind ≤ limit."""
    kind = field.type
    if isinstance(kind, msgspec.inspect.UnionType):  # an optional field: X | None
        [kind] = [t for t in kind.types if not isinstance(t, msgspec.inspect.NoneType)]
    names = {
        msgspec.inspect.IntType: "int",
        msgspec.inspect.StrType: "string",
        msgspec.inspect.BoolType: "bool",
        msgspec.inspect.DictType: "map",
    }
    text = f"`{field.name}`{'' if field.required else '?'} {names[type(kind)]}"
    if isinstance(kind, msgspec.inspect.IntType):
        assert (kind.ge, kind.le) == (-protocol.MAX_INT, protocol.MAX_INT), field.name
    if isinstance(kind, msgspec.inspect.StrType) and kind.max_length != 64:
        text += f" ≤ {kind.max_length}"
    return text


def test_the_client_message_table_is_the_structs_the_server_decodes() -> None:
    doc = message_table("Client messages:")
    infos = msgspec.inspect.multi_type_info(list(messages.CLIENT_TYPES.values()))
    code = {}
    for tag, info in zip(messages.CLIENT_TYPES, infos, strict=True):
        assert isinstance(info, msgspec.inspect.StructType)
        fields = [documented_field(f) for f in info.fields if f.name != "id"]
        code[tag] = ", ".join(fields) or "—"
    assert "`move` map" in code["move"] and len(code) > 40  # the Structs were read
    assert sorted(code.keys() - doc.keys()) == [], "messages missing from PROTOCOL.md's table"
    assert sorted(doc.keys() - code.keys()) == [], "PROTOCOL.md lists messages never decoded"
    wrong = {t: (doc[t], code[t]) for t in code if doc[t] != code[t]}
    assert wrong == {}, "PROTOCOL.md's fields (left) differ from the Struct's (right)"


def test_the_server_message_table_is_every_type_the_server_sends() -> None:
    doc = message_table("Server messages:")
    assert {"welcome", "event", "error"} <= doc.keys()  # the table was read
    assert sorted(messages.SERVER_TYPES - doc.keys()) == [], "missing from PROTOCOL.md"
    assert sorted(doc.keys() - messages.SERVER_TYPES) == [], "PROTOCOL.md lists unknown types"
    todo, built = [messages.Reply], set()
    while todo:
        cls = todo.pop()
        todo += cls.__subclasses__()
        if cls not in (messages.Reply, messages.Answer):
            built.add(cls.__struct_config__.tag)
    assert sorted(built - messages.SERVER_TYPES) == [] and {"error", "event"} <= built


def test_the_error_struct_carries_the_extra_fields_the_error_table_names() -> None:
    table = PROTOCOL.read_text().split("Stable codes:", 1)[1].split("## Close codes", 1)[0]
    extra = set(messages.Error.__struct_fields__) - {"id", "code", "message"}
    assert extra == set(messages.Error.KNOWN)
    assert [f for f in sorted(extra) if f"`{f}`" not in table] == []


def code_positions() -> dict[str, int]:
    """Each refusal class (and `send_error`) by name: the position of its `code` argument."""
    import moose_server.app  # noqa: F401  (imports every module that defines a refusal)
    from moose_server.net.ws import Connection

    found, todo = {}, [errors.Refusal, protocol.ProtocolError]
    while todo:
        cls = todo.pop()
        params = list(inspect.signature(cls).parameters)
        if "code" in params:  # else the class gives its own code: test_ws and others check it
            found[cls.__name__] = params.index("code")
        todo += cls.__subclasses__()
    send_error = list(inspect.signature(Connection.send_error).parameters)
    found["send_error"] = send_error.index("code") - 1  # after self
    return found


def given_code(node: ast.Call, position: int) -> str | None:
    """The literal `code` of a call, by position or keyword; None if not a literal."""
    keyword = [k.value for k in node.keywords if k.arg == "code"]
    args = [*node.args[position : position + 1], *keyword]
    if args and isinstance(args[0], ast.Constant) and isinstance(args[0].value, str):
        return args[0].value
    return None


def codes_given_to_refusals() -> dict[str, set[str]]:
    """Literal codes given to a refusal, by file: `GameError("not_your_turn", ...)`."""
    positions: dict[str, int] = code_positions()
    found: dict[str, set[str]] = {}
    called = re.compile(rf"\b({'|'.join(positions)})\(")
    for path in [*SERVER.rglob("*.py"), ROOT / "client" / "moose" / "protocol.py"]:
        source = path.read_text()
        if not called.search(source):
            continue
        for node in ast.walk(ast.parse(source)):
            if not isinstance(node, ast.Call):
                continue
            func = node.func
            name = func.id if isinstance(func, ast.Name) else getattr(func, "attr", "")
            if name in positions and (code := given_code(node, positions[name])):
                found.setdefault(code, set()).add(path.name)
    return found


def test_every_code_the_server_refuses_with_is_a_protocol_code() -> None:
    given = codes_given_to_refusals()
    assert {"not_your_turn", "bad_code", "unavailable"} <= set(given)  # the calls were found
    unknown = {code: files for code, files in given.items() if code not in protocol.ERROR_CODES}
    assert unknown == {}, "these would reach the client as `internal`"


def test_every_limit_s_refusal_takes_its_code_from_the_table_of_limits() -> None:
    # One place for each limit's code: limits/rates.py, through the limiter.
    codes = {limit.code for limit in rates.RATES} | {hold.code for hold in rates.HOLDS}
    given = codes_given_to_refusals()
    assert "bad_code" in given  # the calls were found
    assert {code: files for code, files in given.items() if code in codes} == {}


def test_every_failure_a_script_returns_is_a_protocol_code_or_handled_by_name() -> None:
    # lua `fail('table_full')` reaches the client as that code; a few are outcomes the
    # Python side turns into another (`too_few`: bad_message; `code_taken`: retried).
    python = "\n".join(p.read_text() for p in SERVER.rglob("*.py"))
    failures = set()
    for path in SERVER.rglob("*.lua"):
        failures |= set(re.findall(r"\bfail\('([a-z_]+)'", path.read_text()))
    assert "table_full" in failures  # the scripts were read
    unhandled = {f for f in failures - protocol.ERROR_CODES if f'"{f}"' not in python}
    assert unhandled == set()


def test_benchmarks_holds_today_s_figures_and_quotes_no_raw_result_file() -> None:
    text = BENCHMARKS.read_text()
    assert len(text.splitlines()) <= 300, "today's figures only: the history is in git"
    assert re.findall(r"bench/results/[\w.-]+", text) == []  # not in the repository
    headings = re.findall(r"^## (.+)$", text, re.M)
    assert len(headings) == len(set(headings)), "one section per measurement"


def test_no_document_test_or_benchmark_names_an_issue_number() -> None:
    # Say what a thing is: an issue's number means nothing to a reader of the code.
    files = [
        *ROOT.glob("*.md"),
        *(ROOT / "docs").rglob("*.md"),
        ROOT / "pyproject.toml",
        *(p for p in (ROOT / "deploy").rglob("*") if p.is_file()),
        *(p for p in (ROOT / "tests").rglob("*.py")),
        *(p for p in (ROOT / "bench").iterdir() if p.is_file()),  # bench/results: not ours
    ]
    named = {
        str(path.relative_to(ROOT)): found
        for path in files
        if (found := re.findall(r"\bissues? ?#?\d+", path.read_text(errors="replace"), re.I))
    }
    assert named == {}
