"""`envdsl synth topics` (topic mining, envdsl/llm/topics.py) against the scripted chat server,
and `envdsl corpus` (envdsl/llm/corpus.py) on directories of specs."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any, Iterator

import pytest
from chat_server import ChatServer
from click.testing import CliRunner

from envdsl.cli import main
from envdsl.llm import topics
from envdsl.llm.corpus import corpus_report

ROOT = Path(__file__).resolve().parents[1]

LIBRARY = {
    "id": "library_loans",
    "topic": "A public library's circulation desk: members borrow and return books, place "
    "holds on copies; a member with overdue loans cannot borrow.",
}
# the same backend in other words: a near-duplicate of LIBRARY
LIBRARY_AGAIN = {
    "id": "book_lending",
    "topic": "Circulation desk of a public library: members borrow books, return books and "
    "place holds on copies; overdue loans block borrowing.",
}
CLINIC = {
    "id": "Clinic Appointments",
    "topic": "A clinic's scheduling system: patients, doctors and appointment slots; a slot "
    "holds one appointment and cancellations must come a day ahead.",
}
HOTEL = {
    "id": "hotel_front_desk",
    "topic": "A hotel's front desk: guests, rooms and reservations; check-in only on the "
    "reservation's date, and a room is never booked twice for one night.",
}


@pytest.fixture
def server() -> Iterator[ChatServer]:
    chat = ChatServer()
    yield chat
    chat.close()


def run(server: ChatServer, *args: str) -> Any:
    command = ["synth", "topics", *args, "--base-url", server.url, "--model", "m", "--backoff", "0"]
    return CliRunner().invoke(main, command)


def lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_topics_from_seeds_drop_duplicates_and_take_turns(
    server: ChatServer, tmp_path: Path
) -> None:
    server.replies = [
        "```json\n" + json.dumps([LIBRARY, LIBRARY_AGAIN, {"id": "x"}, "not an object"]) + "\n```",
        json.dumps([LIBRARY, CLINIC]),
    ]
    out = tmp_path / "topics.jsonl"
    result = run(server, "public services", "healthcare", "-n", "2", "-o", str(out))
    assert result.exit_code == 0, result.output
    kept = lines(out)
    assert [t["id"] for t in kept] == ["library_loans", "clinic_appointments"]
    assert [t["source"] for t in kept] == ["public services", "healthcare"]
    # the rounds asked for the seeds in turn, the second shown the ids already taken
    first, second = (server.user_messages(i)[0] for i in range(2))
    assert "domain: public services" in first and "already taken" not in first
    assert "domain: healthcare" in second and "library_loans" in second
    assert "1 duplicates, 2 invalid" in result.output  # round 1: LIBRARY_AGAIN; {"id"}, a string
    # what synth --batch reads
    from envdsl.llm.batch import read_items

    assert [item.id for item in read_items(out)] == ["library_loans", "clinic_appointments"]


def test_topics_resume_from_the_file_and_stop_short_with_exit_1(
    server: ChatServer, tmp_path: Path
) -> None:
    out = tmp_path / "topics.jsonl"
    # a previous run kept one topic and was killed mid-line
    out.write_text(json.dumps({**LIBRARY, "source": "s"}) + '\n{"id": "cut', encoding="utf-8")
    server.replies = [json.dumps([LIBRARY_AGAIN]), "no JSON here", json.dumps([HOTEL])]
    result = run(server, "s", "-n", "3", "--rounds", "3", "-o", str(out))
    assert result.exit_code == 1
    assert "2 of 3 topics kept; run again to resume" in result.output
    assert [t["id"] for t in lines(out)] == ["library_loans", "hotel_front_desk"]
    assert "library_loans" in server.user_messages(0)[0]  # the resumed topic counts as taken


def test_topics_from_task_descriptions(server: ChatServer, tmp_path: Path) -> None:
    tasks = tmp_path / "tasks.jsonl"
    descriptions = [{"instruction": f"Book room {n} for Ana on May {n}."} for n in range(25)]
    tasks.write_text("\n".join(json.dumps(d) for d in descriptions) + "\n", encoding="utf-8")
    server.replies = [json.dumps([HOTEL]), json.dumps([CLINIC])]
    out = tmp_path / "topics.jsonl"
    result = run(server, "--from-tasks", str(tasks), "-n", "2", "-o", str(out))
    assert result.exit_code == 0, result.output
    assert {t["source"] for t in lines(out)} == {"tasks"}
    first, second = (server.user_messages(i)[0] for i in range(2))
    # 20 descriptions a request, in turn: every description is shown
    assert "Book room 0 for" in first and "Book room 19 for" in first and "room 20" not in first
    assert "Book room 20 for" in second and "Book room 24 for" in second


@pytest.mark.parametrize(
    "args, message",
    [
        (["-n", "2", "-o", "t.jsonl"], "seed domains (words) or --from-tasks FILE"),
        (["a", "--from-tasks", "x.txt", "-o", "t.jsonl"], "seed domains (words) or --from-tasks"),
        (["--from-tasks", "missing.txt", "-o", "t.jsonl"], "cannot read 'missing.txt'"),
        (["a", "-o", "no/such/dir/t.jsonl"], "no such directory"),
        (["a", "-o", "t.jsonl", "--grammar"], "--grammar is for specs"),
    ],
)
def test_topics_usage_errors_are_one_line(
    server: ChatServer,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    args: list[str],
    message: str,
) -> None:
    monkeypatch.chdir(tmp_path)
    result = run(server, *args)
    assert result.exit_code == 2
    assert message in result.output and "Traceback" not in result.output
    assert not server.requests


def test_bad_descriptions_file_is_a_usage_error(server: ChatServer, tmp_path: Path) -> None:
    tasks = tmp_path / "tasks.jsonl"
    tasks.write_text('{"instruction": "ok"}\n{"other": 1}\n', encoding="utf-8")
    result = run(server, "--from-tasks", str(tasks), "-o", str(tmp_path / "t.jsonl"))
    assert result.exit_code == 2 and "tasks.jsonl:2: no 'instruction'" in result.output


def test_similarity_tells_one_backend_from_another() -> None:
    assert topics.similarity(LIBRARY["topic"], LIBRARY_AGAIN["topic"]) >= topics.NEAR_DUPLICATE
    for a, b in [(LIBRARY, CLINIC), (CLINIC, HOTEL), (LIBRARY, HOTEL)]:
        assert topics.similarity(a["topic"], b["topic"]) < topics.NEAR_DUPLICATE
    assert topics.topic_id("Clinic Appointments!") == "clinic_appointments"


def test_corpus_report_finds_a_renamed_copy(tmp_path: Path) -> None:
    for name in ("online_shop", "library_lending", "sleep_tracking"):
        for path in (ROOT / "examples").glob(f"{name}.*"):  # with its task and state files
            shutil.copy(path, tmp_path)
    # the same schema under another env name and one field renamed: a near-duplicate
    text = (ROOT / "examples" / "online_shop.env").read_text(encoding="utf-8")
    (tmp_path / "web_store.env").write_text(
        text.replace("env OnlineShop", "env WebStore"), encoding="utf-8"
    )
    (tmp_path / "broken.env").write_text("env Broken {\n  state { x: int\n", encoding="utf-8")
    (tmp_path / "online_shop.failed.env").write_text("not a spec", encoding="utf-8")
    log = tmp_path / "log.jsonl"
    log.write_text(
        "\n".join(
            json.dumps({"id": i, "phase": "done", "status": s})
            for i, s in [("a", "accepted"), ("b", "failed"), ("a", "accepted"), ("c", "error")]
        ),
        encoding="utf-8",
    )
    report = corpus_report(tmp_path, log)
    assert [Path(s.path).name for s in report.specs] == [
        "broken.env",
        "library_lending.env",
        "online_shop.env",
        "sleep_tracking.env",
        "web_store.env",
    ]
    assert [Path(s.path).name for s in report.clean] == [
        "library_lending.env",
        "online_shop.env",
        "sleep_tracking.env",
        "web_store.env",
    ]
    pairs = [(Path(a).name, Path(b).name) for a, b, _ in report.near_duplicates]
    assert pairs == [("online_shop.env", "web_store.env")]
    library = next(s for s in report.specs if s.path.endswith("library_lending.env"))
    assert library.tasks > 0  # its own tasks and those of library_lending.tasks.env
    assert report.outcomes == {"accepted": 1, "failed": 1, "error": 1}
    shown = CliRunner().invoke(main, ["corpus", str(tmp_path), "--log", str(log)])
    assert shown.exit_code == 0
    assert "5 specs, 4 clean" in shown.output and "1 near-duplicate pair(s)" in shown.output
    as_json = CliRunner().invoke(main, ["corpus", str(tmp_path), "--format", "json"])
    assert json.loads(as_json.output)["near_duplicates"][0]["similarity"] == 1.0
