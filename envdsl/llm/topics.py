"""`envdsl synth topics`: environment topics for `synth --batch`, mined with a model.

EnvScaler's SkelBuilder starts with topic mining: from seed domains, or from task
descriptions (what users ask an agent to do), a model names the stateful backends the tasks
need. Here each round asks for a few new topics, shown the ids already taken; every proposal
is parsed, and kept only when it is new: not the id of a kept topic, and not a near-duplicate
of one by the words of its description (word-set Jaccard similarity, stop words aside). Kept
topics are appended to the output JSONL at once, one `{"id", "topic", "source"}` object a line,
the input `synth --batch` reads; a run resumes from the file it writes.

Seeds take turns, one per round, so every domain gets rounds; descriptions go to the model in
chunks, in turn, so every description is read.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Sequence

from envdsl.llm.client import ChatClient, Message
from envdsl.util.word_sets import jaccard, singular

# two topics whose descriptions share this share of their words (stop words aside) describe
# the same backend: "a library's loans and holds" and "loans and holds at a public library"
NEAR_DUPLICATE = 0.5
DESCRIPTIONS_PER_ROUND = 20  # task descriptions shown in one request
_TAKEN_SHOWN = 200  # ids of kept topics shown to the model, the latest first
_MAX_ID = 64

_STOP_WORDS = frozenset(
    """a an and any are as at be by can each for from has have in into is it its of on or per
    that the their them they this to via where which who with users user agent agents system
    systems platform backend environment tool tools manage managing management service services
    track tracking""".split()
)

_SYSTEM = (
    "You design tool-interaction environments for training and evaluating LLM agents: "
    "stateful backends (a shop, a library, a ticket desk) that an agent can only touch "
    "through tools. You answer with JSON only."
)

_SHAPE = (
    "Reply with a JSON array only, one object per environment: "
    '{"id": "snake_case_name", "topic": "..."}. The id names the backend in 2 to 5 words. '
    "The topic, in 2 to 4 sentences, says what the backend is, its 3 to 5 kinds of records "
    "(entities), the operations its users ask for (queries and changes), and one or two of "
    "its business rules."
)


class TopicsInputError(ValueError):
    """The seeds or the descriptions file are not what topic mining takes."""


@dataclass(frozen=True, slots=True)
class Topic:
    id: str
    topic: str
    source: str  # the seed domain, or "tasks" for topics mined from task descriptions

    def record(self) -> dict[str, str]:
        return {"id": self.id, "topic": self.topic, "source": self.source}


@dataclass(slots=True)
class TopicRound:
    round: int
    source: str
    proposed: int  # objects in the reply with an id and a topic
    kept: int
    duplicates: int
    invalid: int  # items that are no topic object, or a reply that is no JSON array
    prompt_tokens: int
    completion_tokens: int

    def log_record(self) -> dict[str, Any]:
        return {"phase": "topics", **{k: getattr(self, k) for k in self.__slots__}}


@dataclass(slots=True)
class TopicsResult:
    kept: list[Topic]  # the resumed ones first
    resumed: int
    rounds: list[TopicRound] = field(default_factory=list)

    @property
    def message(self) -> str:
        new = len(self.kept) - self.resumed
        duplicates = sum(r.duplicates for r in self.rounds)
        return (
            f"{len(self.kept)} topics ({new} new, {self.resumed} from the file), "
            f"{len(self.rounds)} rounds, {duplicates} duplicates dropped"
        )


@dataclass(frozen=True, slots=True)
class TopicsRequest:
    """What to mine from: seed domains, or task descriptions (exactly one is non-empty)."""

    seeds: tuple[str, ...] = ()
    descriptions: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if bool(self.seeds) == bool(self.descriptions):
            raise TopicsInputError("give seed domains or task descriptions (one of them)")


def read_descriptions(path: str | Path) -> list[str]:
    """Task descriptions from a file: one a line, or JSONL objects with one of the fields
    `instruction`, `task`, `description`, `query`, `question`, `prompt` (a string)."""
    descriptions = []
    with open(path, encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            text = line.strip()
            if not text:
                continue
            if text.startswith("{"):
                try:
                    record = json.loads(text)
                except json.JSONDecodeError as error:
                    raise TopicsInputError(f"{path}:{number}: not JSON: {error.msg}") from error
                text = _description_of(record)
                if not text:
                    raise TopicsInputError(
                        f"{path}:{number}: no 'instruction', 'task', 'description', 'query', "
                        "'question' or 'prompt' string"
                    )
            descriptions.append(" ".join(text.split()))
    if not descriptions:
        raise TopicsInputError(f"{path}: no task description")
    return descriptions


def _description_of(record: object) -> str:
    if not isinstance(record, dict):
        return ""
    for key in ("instruction", "task", "description", "query", "question", "prompt"):
        value = record.get(key)
        if isinstance(value, str) and value.strip():
            return value.strip()
    return ""


def read_topics(path: Path) -> list[Topic]:
    """The topics a previous run kept (a torn last line, from a killed run, is ignored)."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        return []
    kept = []
    for line in lines:
        try:
            record = json.loads(line)
        except json.JSONDecodeError:
            continue
        topic = _as_topic(record, str(record.get("source", "")) if isinstance(record, dict) else "")
        if topic is not None:
            kept.append(topic)
    return kept


def topic_id(text: str) -> str:
    """An id as `synth --batch` file names take it: lower snake case, ASCII."""
    words = re.findall(r"[a-z0-9]+", text.lower())
    return "_".join(words)[:_MAX_ID].strip("_")


def similarity(a: str, b: str) -> float:
    """Word-set Jaccard similarity of two topic descriptions, stop words aside."""
    return jaccard(_content_words(a), _content_words(b))


def _content_words(text: str) -> frozenset[str]:
    words = re.findall(r"[a-z0-9]+", text.lower())
    return frozenset(singular(w) for w in words if w not in _STOP_WORDS and len(w) > 1)


def parse_proposals(reply: str) -> tuple[list[dict[str, Any]], int]:
    """The objects of a reply's JSON array (in a ```json fence or bare), and how many items
    were not objects. A reply without an array: ([], 1)."""
    text = reply.strip()
    fenced = re.search(r"```(?:json)?\s*\n(.*?)```", text, re.DOTALL)
    if fenced:
        text = fenced.group(1).strip()
    start, end = text.find("["), text.rfind("]")
    if start < 0 or end < start:
        return [], 1
    try:
        data = json.loads(text[start : end + 1])
    except (json.JSONDecodeError, RecursionError):
        return [], 1
    if not isinstance(data, list):
        return [], 1
    objects = [item for item in data if isinstance(item, dict)]
    return objects, len(data) - len(objects)


def _as_topic(record: object, source: str) -> Topic | None:
    if not isinstance(record, dict):
        return None
    raw_id, text = record.get("id"), record.get("topic")
    if not isinstance(raw_id, str) or not isinstance(text, str):
        return None
    identifier, description = topic_id(raw_id), " ".join(text.split())
    if not identifier or len(description) < 20:
        return None
    return Topic(identifier, description, source)


def duplicate_of(candidate: Topic, kept: Sequence[Topic]) -> Topic | None:
    """The kept topic `candidate` repeats: the same id, or a near-duplicate description."""
    for topic in kept:
        if topic.id == candidate.id or similarity(topic.topic, candidate.topic) >= NEAR_DUPLICATE:
            return topic
    return None


def round_prompt(request: TopicsRequest, round_index: int, wanted: int, taken: list[str]) -> str:
    """The request of one round (0-based): its seed, or its chunk of descriptions."""
    if request.seeds:
        seed = request.seeds[round_index % len(request.seeds)]
        ask = (
            f"Propose {wanted} different environments in this domain: {seed}.\n"
            "Each must be a backend with its own data and rules (not a chat assistant, not "
            "a calculator), and realistic: what a company or an institution actually runs."
        )
    else:
        chunk = _chunk(request.descriptions, round_index)
        shown = "\n".join(f"- {text}" for text in chunk)
        ask = (
            "These are tasks users gave an agent:\n"
            f"{shown}\n\n"
            f"Propose up to {wanted} environments: the stateful backends these tasks need, "
            "one per distinct backend (tasks that need the same backend share one). Leave out "
            "tasks that need no stateful backend (general knowledge, chit-chat, arithmetic)."
        )
    lines = [ask, "", _SHAPE]
    if taken:
        listed = ", ".join(reversed(taken[-_TAKEN_SHOWN:]))
        lines += ["", f"Do not repeat these environments (ids already taken): {listed}"]
    return "\n".join(lines)


def _chunk(descriptions: Sequence[str], round_index: int) -> Sequence[str]:
    chunks = max(1, -(-len(descriptions) // DESCRIPTIONS_PER_ROUND))
    start = (round_index % chunks) * DESCRIPTIONS_PER_ROUND
    return descriptions[start : start + DESCRIPTIONS_PER_ROUND]


def mine_topics(
    client: ChatClient,
    request: TopicsRequest,
    output: Path,
    *,
    count: int,
    per_round: int = 10,
    max_rounds: int | None = None,
    on_round: Callable[[TopicRound], None] | None = None,
) -> TopicsResult:
    """Rounds until `count` topics are kept (those already in `output` count) or `max_rounds`
    (default: twice what `count` needs, plus one) have run; each kept topic is appended to
    `output` as it is kept."""
    kept = read_topics(output)
    result = TopicsResult(kept=kept, resumed=len(kept))
    rounds = max_rounds if max_rounds is not None else 2 * -(-count // per_round) + 1
    source = "tasks" if request.descriptions else ""
    output.parent.mkdir(parents=True, exist_ok=True)
    _end_with_newline(output)
    with open(output, "a", encoding="utf-8") as handle:
        for index in range(rounds):
            if len(kept) >= count:
                break
            wanted = min(per_round, count - len(kept))
            prompt = round_prompt(request, index, wanted, [t.id for t in kept])
            messages: list[Message] = [
                {"role": "system", "content": _SYSTEM},
                {"role": "user", "content": prompt},
            ]
            reply = client.complete(messages)
            seed = request.seeds[index % len(request.seeds)] if request.seeds else source
            objects, invalid = parse_proposals(reply.text)
            outcome = TopicRound(
                round=index + 1,
                source=seed,
                proposed=0,
                kept=0,
                duplicates=0,
                invalid=invalid,
                prompt_tokens=reply.prompt_tokens,
                completion_tokens=reply.completion_tokens,
            )
            for record in objects:
                topic = _as_topic(record, seed)
                if topic is None:
                    outcome.invalid += 1
                    continue
                outcome.proposed += 1
                if len(kept) >= count:  # more than asked for: the rest is not looked at
                    continue
                if duplicate_of(topic, kept) is not None:
                    outcome.duplicates += 1
                    continue
                kept.append(topic)
                outcome.kept += 1
                handle.write(json.dumps(topic.record(), ensure_ascii=False) + "\n")
                handle.flush()
            result.rounds.append(outcome)
            if on_round is not None:
                on_round(outcome)
    return result


def _end_with_newline(path: Path) -> None:
    """Cut a torn last line (a killed run) so that appended lines start on their own."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return
    if data and not data.endswith(b"\n"):
        path.write_bytes(data[: data.rfind(b"\n") + 1])
