"""Texts and names as sets of words, and how much two such sets share: how topic mining
(envdsl/llm/topics.py) and the corpus report (envdsl/llm/corpus.py) tell near-duplicates."""

from __future__ import annotations

from collections.abc import Set


def singular(word: str) -> str:
    """Plural and singular as one word ("orders", "order"; "entries", "entry"): enough for
    near-duplicates, not a stemmer."""
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 3 and word.endswith("s") and not word.endswith("ss"):
        return word[:-1]
    return word


def jaccard(a: Set[str], b: Set[str]) -> float:
    """The share of their words two sets have in common (0.0 when either is empty)."""
    if not a or not b:
        return 0.0
    return len(a & b) / len(a | b)
