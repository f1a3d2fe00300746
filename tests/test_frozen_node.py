"""`@node` behaves as `dataclass(frozen=True, slots=True)` for everything the AST relies on."""

from __future__ import annotations

import copy
import dataclasses
import inspect
import pickle

import pytest

from envdsl.syntax import ast
from envdsl.util.frozen_node import node, record


@node
class Pair:
    left: object
    right: object
    tags: dict[str, str] = dataclasses.field(default_factory=dict)
    note: str = ""


@dataclasses.dataclass(frozen=True, slots=True)
class ReferencePair:
    left: object
    right: object
    tags: dict[str, str] = dataclasses.field(default_factory=dict)
    note: str = ""


def test_init_defaults_and_factories_as_the_dataclass() -> None:
    first, second = Pair(1, 2), Pair(1, 2)
    assert first.tags == {} and first.note == ""
    assert first.tags is not second.tags  # a fresh dict per instance
    assert str(inspect.signature(Pair)) == str(inspect.signature(ReferencePair))
    with pytest.raises(TypeError):
        Pair(1)  # type: ignore[call-arg]


def test_repr_eq_and_hash_as_the_dataclass() -> None:
    mine, reference = Pair(1, "x", note="n"), ReferencePair(1, "x", note="n")
    assert repr(mine).replace("Pair", "", 1) == repr(reference).replace("ReferencePair", "", 1)
    assert Pair(1, "x") == Pair(1, "x") and Pair(1, "x") != Pair(1, "y")
    assert Pair(1, "x") != ReferencePair(1, "x")  # type: ignore[comparison-overlap]
    name = ast.Name("a", None)  # type: ignore[arg-type]
    assert hash(name) == hash(ast.Name("a", None))  # type: ignore[arg-type]
    assert len({name, ast.Name("a", None), ast.Name("b", None)}) == 2  # type: ignore[arg-type]


def test_frozen_slotted_picklable_and_replaceable() -> None:
    pair = Pair(1, 2)
    with pytest.raises(dataclasses.FrozenInstanceError):
        pair.left = 3  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        del pair.left
    assert not hasattr(pair, "__dict__")
    assert pickle.loads(pickle.dumps(pair)) == pair
    assert copy.deepcopy(pair) == pair and copy.copy(pair) == pair
    assert dataclasses.replace(pair, right=5) == Pair(1, 5)
    assert [f.name for f in dataclasses.fields(pair)] == ["left", "right", "tags", "note"]
    match pair:
        case Pair(left, right):
            assert (left, right) == (1, 2)


@node
class One:
    only: int


@node
class Empty:
    pass


def test_classes_of_one_field_and_none() -> None:
    assert One(1) == One(1) and hash(One(1)) == hash(One(1)) and One(1) != One(2)
    assert Empty() == Empty() and hash(Empty()) == hash(Empty()) and repr(Empty()) == "Empty()"
    assert pickle.loads(pickle.dumps(One(3))) == One(3)


@record
class Counter:
    name: str
    counts: list[int] = dataclasses.field(default_factory=list)
    seen: int = dataclasses.field(default=0, compare=False, repr=False)

    def __post_init__(self) -> None:
        self.name = self.name.strip()


def test_record_is_a_mutable_dataclass() -> None:
    counter = Counter(" a ")
    assert (
        counter.name == "a" and counter.counts == [] and counter.counts is not Counter("b").counts
    )
    counter.seen = 3
    counter.counts.append(1)
    assert counter == Counter("a", [1]) and repr(counter) == "Counter(name='a', counts=[1])"
    with pytest.raises(TypeError):
        hash(counter)
    assert pickle.loads(pickle.dumps(counter)) == counter


@node
class LabelledPair(Pair):
    label: str = "x"


def test_a_subclass_sets_its_base_fields_through_their_slots() -> None:
    made = LabelledPair(1, 2, {}, "n", "l")
    assert (made.left, made.right, made.tags, made.note, made.label) == (1, 2, {}, "n", "l")
    with pytest.raises(dataclasses.FrozenInstanceError):
        made.left = 3
    assert pickle.loads(pickle.dumps(made)) == made
