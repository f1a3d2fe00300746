"""When a string is prose: free text such as a note, a reason or a message body.

An agent words prose its own way, so a check may ask only for key words of it (W5022), and a
solution passing prose is not asked to have it checked (W5012). The judgement is by the value:
four words or more (split at spaces). A name ("Ana Lopez"), a code ("fixed in 2.1") or a title stays below it.
"""

from __future__ import annotations

PROSE_WORDS = 4


def is_prose(text: str) -> bool:
    return len(text.split()) >= PROSE_WORDS
