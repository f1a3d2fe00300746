"""Checks that compare as people mean (issue 23, point 5): `same_items`, `mentions`, and the
lints that point at them (W5021 list-compared-in-order, W5022 exact-phrase-of-prose).

Right runs that differ from the reference only in form (another order, other words, another
number form) score 1.0; gamed answers (every candidate listed, the value negated, nothing
said) do not."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
import pytest

import envdsl.gym
from envdsl.diagnostics import codes
from envdsl.generated.loader import load
from envdsl.pipeline import check_source
from envdsl.runtime import Environment
from envdsl.runtime.text_match import mentions, same_items, words
from envdsl.util.source import SourceFile

ROOT = Path(__file__).resolve().parent.parent

ROOMS = """rooms = [Room(room_id="R1", price=120.0), Room(room_id="R2", price=99.5),
               Room(room_id="R3", price=150.0)]"""
HOTEL = '''env Hotel {
  """Rooms of a small hotel and the replies its desk sends."""
  entity Room {
    key room_id: str
    price: float
    tags: list[str] = []
  }
  entity Reply { key reply_id: str = auto("RE"), room: ref Room, body: str }
  state {
    rooms: table Room
    replies: table Reply
  }
  query list_rooms() -> list[Room] {
    """Every room."""
    return rooms
  }
  action set_tags(room_id: str, tags: list[str]) -> Room {
    """Replace a room's tags."""
    let r = rooms.get(room_id) else "no such room"
    r.tags = tags
    return r
  }
  action reply(room_id: str, body: str) -> Reply {
    """Send a reply about a room."""
    require room_id in rooms else "no such room"
    return replies.insert(Reply(room=room_id, body=body))
  }
  task cheapest_room {
    """Which room is the cheapest, and what does it cost a night?"""
    init { ROOMS }
    solution {
      list_rooms()
      answer "R2, at $99.50 a night."
    }
    check "names the room": mentions(answer, "R2")
    check "gives its price": mentions(answer, min(r.price for r in rooms))
  }
  task two_rooms {
    """Which rooms cost more than 100 a night?"""
    init { ROOMS }
    solution {
      list_rooms()
      answer "R1 and R3."
    }
    check "names both": mentions(answer, [r.room_id for r in rooms if r.price > 100.0])
  }
  task tag_r1 {
    """Tag room R1 as quiet, sea view and balcony."""
    init { rooms = [Room(room_id="R1", price=120.0)] }
    solution { set_tags(room_id="R1", tags=["quiet", "sea view", "balcony"]) }
    check "R1 has the three tags": same_items(rooms["R1"].tags, ["quiet", "sea view", "balcony"])
  }
  task apologise {
    """Reply about room R1: apologise for the noise and offer a 20% discount."""
    init { rooms = [Room(room_id="R1", price=120.0)] }
    solution { reply(room_id="R1", body="Sorry about the noise; we offer you 20% off.") }
    check "the reply apologises and offers 20%":
      any(r.room == "R1" and mentions(r.body, "sorry") and mentions(r.body, "20") for r in replies)
  }
}
'''.replace("ROOMS", ROOMS)


@pytest.fixture(scope="module")
def hotel(tmp_path_factory: pytest.TempPathFactory) -> type[Environment]:
    path = tmp_path_factory.mktemp("hotel") / "hotel.env"
    path.write_text(HOTEL, encoding="utf-8")
    return load(path)


def _answered(env_class: type[Environment], task: str, answer: str) -> float:
    env = env_class()
    env.reset(task=task)
    env.call("list_rooms", {})
    return float(env.evaluate(answer=answer)["reward"])


def test_the_spec_checks_clean() -> None:
    result = check_source(SourceFile("hotel.env", HOTEL))
    assert [d.code for d in result.diagnostics] == []


@pytest.mark.parametrize(
    "answer",
    [
        "R2, at $99.50 a night.",
        "The cheapest is r2: 99.5 dollars per night",
        "room R2 (99.50 EUR)",
        "It's R2 — $99.5.",
    ],
)
def test_other_wordings_and_number_forms_score_one(hotel: type[Environment], answer: str) -> None:
    assert _answered(hotel, "cheapest_room", answer) == 1.0


@pytest.mark.parametrize(
    "answer",
    [
        "",  # said nothing
        "R1, R2 or R3; 120, 99.5 or 150",  # every candidate the state holds
        "R2 or R3, at 99.5",  # two rooms named
        "Not R2: it is not 99.5",  # negated
        "R22 at 199.5",  # longer ids and numbers are other values
    ],
)
def test_gamed_answers_do_not_score_one(hotel: type[Environment], answer: str) -> None:
    assert _answered(hotel, "cheapest_room", answer) < 1.0


def test_every_candidate_listed_earns_nothing(hotel: type[Environment]) -> None:
    assert _answered(hotel, "cheapest_room", "R1 R2 R3 120 99.5 150") == 0.0


def test_a_list_of_values_is_named_in_any_order_and_alone(hotel: type[Environment]) -> None:
    assert _answered(hotel, "two_rooms", "R3 and R1") == 1.0
    assert _answered(hotel, "two_rooms", "r1, r3") == 1.0
    assert _answered(hotel, "two_rooms", "R1") == 0.0  # one is missing
    assert _answered(hotel, "two_rooms", "R1, R2 and R3") == 0.0  # R2 is not one


def test_a_reordered_list_scores_one_through_gymnasium(hotel: type[Environment]) -> None:
    env = envdsl.gym.make(hotel, task="tag_r1")
    env.reset(seed=0)
    action = {"name": "set_tags", "arguments": {"room_id": "R1", "tags": ["balcony", "quiet"]}}
    _, reward, terminated, _, info = env.step(action)
    assert reward == 0.0 and not terminated  # a tag missing
    tags = ["balcony", "sea view", "quiet"]  # the instruction's tags, in another order
    _, reward, terminated, _, info = env.step(
        {"name": "set_tags", "arguments": {"room_id": "R1", "tags": tags}}
    )
    assert info["evaluation"]["success"] is True and terminated and reward == 1.0


@pytest.mark.parametrize(
    "body, success",
    [
        ("We are SO sorry for the noise. Here is 20 % off your stay.", True),  # paraphrase
        ("sorry! 20% discount applied", True),
        ("We are not sorry. 20% off.", False),  # negated
        ("Sorry about that.", False),  # no offer
        ("", False),
    ],
)
def test_a_paraphrased_message_passes_through_gymnasium(
    hotel: type[Environment], body: str, success: bool
) -> None:
    env = envdsl.gym.make(hotel, task="apologise")
    env.reset(seed=0)
    _, reward, terminated, _, info = env.step(
        {"name": "reply", "arguments": {"room_id": "R1", "body": body}}
    )
    assert info["evaluation"]["success"] is success and terminated is success


def test_normalized_words() -> None:
    assert words("$1,500.00 total") == ("1500", "total")
    assert words("7.50h, U2!") == ("7.5", "h", "u", "2")
    assert words("LOG-0001 isn't 1.2.3") == ("log", "0001", "isnt", "1.2.3")
    assert words("1,2") == ("1", "2")


@pytest.mark.parametrize(
    "answer, named",
    [
        ("2", True),
        ("They play two fixtures in March 2025.", True),  # a count written out
        ("twenty-two", False),  # 22, not 2
        ("On 2025-03-01 and 2025-03-15: 2 matches", True),  # a date's parts are no choice
        ("They won 2-1 twice: 2 wins", True),  # a score is no choice
        ("2 or 3", False),  # a hedge names no one value, whatever the state holds
        ("either 2 or 3 fixtures", False),
        ("between 2 and 3", False),
        ("3", False),
    ],
)
def test_mentions_of_a_count_not_in_the_state(answer: str, named: bool) -> None:
    assert mentions(answer, 2, {}) is named


def test_number_words() -> None:
    assert words("twenty-five users, two logs, one of them") == (
        "25", "users", "2", "logs", "one", "of", "them"
    )  # fmt: skip
    assert words("twenty five six, 20 five") == ("25", "6", "20", "5")
    assert mentions("$7.50", 7.5, {}) and not mentions("$7.50 or $8", 7.5, {})


def test_same_items_counts_repeats() -> None:
    assert same_items([1, 2, 2], [2, 1, 2])
    assert not same_items([1, 2, 2], [1, 1, 2])
    assert not same_items([1], [1, 1])
    assert same_items([], set())


def test_mentions_looks_only_at_the_field_of_the_value() -> None:
    state = {
        "users": {"U1": {"user_id": "U1", "name": "Ana"}, "U2": {"user_id": "U2", "name": "Bo"}}
    }
    assert mentions("Bo (U2) is the one", "U2", state)  # a name is no rival of an id
    assert not mentions("U2, not U1", "U2", state)
    assert mentions(
        "Dune Messiah", "Dune Messiah", {"b": {"1": {"t": "Dune"}, "2": {"t": "Dune Messiah"}}}
    )
    assert not mentions("anything", "", state)


# ---- typing -------------------------------------------------------------------------------------


def _codes(source: str) -> list[str]:
    return [d.code for d in check_source(SourceFile("x.env", source), verify=False).diagnostics]


def test_mentions_is_for_checks_only() -> None:
    spec = HOTEL.replace(
        "return rooms\n", 'return [r for r in rooms if mentions("x", r.room_id)]\n'
    )
    assert codes.UNKNOWN_FUNCTION in _codes(spec)


def test_same_items_compares_like_with_like() -> None:
    spec = HOTEL.replace('["quiet", "sea view", "balcony"])', "[1, 2])")
    assert codes.TYPE_MISMATCH in _codes(spec)


def test_mentions_takes_text_and_a_value() -> None:
    assert codes.TYPE_MISMATCH in _codes(
        HOTEL.replace('mentions(answer, "R2")', "mentions(answer, true)")
    )
    spec = HOTEL.replace('mentions(answer, "R2")', "mentions(answer)")
    assert codes.WRONG_ARITY in _codes(spec)


# ---- lints --------------------------------------------------------------------------------------

IN_ORDER = HOTEL.replace(
    'same_items(rooms["R1"].tags, ["quiet", "sea view", "balcony"])',
    'rooms["R1"].tags == ["quiet", "sea view", "balcony"]',
)
PHRASE = HOTEL.replace(
    'mentions(r.body, "sorry") and mentions(r.body, "20")',
    '"we offer you 20% off" in lower(r.body)',
)


def test_an_ordered_list_check_is_w5021_with_a_fix() -> None:
    diagnostics = check_source(SourceFile("x.env", IN_ORDER)).diagnostics
    assert [d.code for d in diagnostics] == [codes.LIST_COMPARED_IN_ORDER]
    (fix,) = diagnostics[0].fixes
    assert (
        fix.edits[0].replacement == 'same_items(rooms["R1"].tags, ["quiet", "sea view", "balcony"])'
    )


def test_the_order_of_a_list_the_agent_does_not_supply_is_not_reported() -> None:
    spec = IN_ORDER.replace("r.tags = tags", 'r.tags = ["quiet", "sea view", "balcony"]')
    assert codes.LIST_COMPARED_IN_ORDER not in _codes(spec)


def test_check_fix_applies_same_items(tmp_path: Path) -> None:
    path = tmp_path / "hotel.env"
    path.write_text(IN_ORDER, encoding="utf-8")
    run = subprocess.run(
        [sys.executable, "-m", "envdsl", "check", "--fix", str(path)],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    assert path.read_text(encoding="utf-8") == HOTEL


def test_an_exact_phrase_of_agent_prose_is_w5022() -> None:
    diagnostics = check_source(SourceFile("x.env", PHRASE)).diagnostics
    assert [d.code for d in diagnostics] == [codes.EXACT_PHRASE_OF_PROSE]
    assert "mentions(" in (diagnostics[0].help or "")


def test_a_phrase_the_instruction_gives_is_not_reported() -> None:
    spec = PHRASE.replace(
        "apologise for the noise and offer a 20% discount", 'write "we offer you 20% off"'
    )
    assert codes.EXACT_PHRASE_OF_PROSE not in [
        d.code for d in check_source(SourceFile("x.env", spec)).diagnostics
    ]


def test_w5012_leaves_prose_alone_but_not_a_short_value() -> None:
    unchecked = HOTEL.replace(
        'any(r.room == "R1" and mentions(r.body, "sorry") and mentions(r.body, "20") for r in replies)',
        'any(r.room == "R1" for r in replies)',
    )
    assert codes.FIELD_UNCHECKED not in [
        d.code for d in check_source(SourceFile("x.env", unchecked)).diagnostics
    ]
    short = unchecked.replace("Sorry about the noise; we offer you 20% off.", "20% off")
    assert codes.FIELD_UNCHECKED in [
        d.code for d in check_source(SourceFile("x.env", short)).diagnostics
    ]


def test_docs_show_the_forms() -> None:
    text = (ROOT / "docs" / "language.md").read_text(encoding="utf-8")
    assert "same_items(" in text and "mentions(" in text
