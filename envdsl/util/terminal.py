"""Spec text made safe to print on a terminal.

Strings in a spec (check texts, instructions, messages, the source lines a diagnostic shows)
come from LLMs and are untrusted.  Printed as they are, an escape sequence can retitle the
terminal, move the cursor, hide or recolour text, and a bidi override can make code read
differently from what it is.  Every control and format character is shown as an escape instead
(`\\x1b`, `\\u202e`); newlines, and tabs where the caller keeps them, stay.
"""

from __future__ import annotations

import re
import time
from typing import TextIO

# C0 and C1 controls, DEL, and the Unicode format characters (category Cf: bidi overrides and
# isolates, zero-width characters, the BOM, tag characters) plus the line/paragraph separators
_UNSAFE = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\u00ad\u0600-\u0605\u061c\u06dd\u070f\u08e2\u180e"
    "\u200b-\u200f\u2028-\u202e\u2060-\u2064\u2066-\u206f\ufeff\ufff9-\ufffb"
    "\U000110bd\U000110cd\U0001bca0-\U0001bca3\U0001d173-\U0001d17a\U000e0001\U000e0020-\U000e007f]"
)


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    return (
        f"\\x{code:02x}"
        if code < 0x100
        else f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"
    )


def printable(text: str, *, keep_tabs: bool = True) -> str:
    """`text` with every control character but newline (and tab) written as an escape."""
    escaped = _UNSAFE.sub(_escape, text)
    return escaped if keep_tabs else escaped.replace("\t", "\\t")


def is_terminal(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):  # no isatty, or a closed stream
        return False


class StatusLine:
    """One line of progress on a terminal, redrawn in place with `\\r` at most every
    `interval` seconds and cleared before other output or at the end."""

    def __init__(self, stream: TextIO, interval: float = 0.1) -> None:
        self.stream = stream
        self.interval = interval
        self.shown = 0  # width of what is on the line now
        self.last_draw = 0.0

    def due(self, force: bool = False) -> bool:
        """Whether a redraw is due now (and, if so, that one is about to happen)."""
        now = time.perf_counter()
        if not force and now - self.last_draw < self.interval:
            return False
        self.last_draw = now
        return True

    def draw(self, line: str) -> None:
        padding = " " * max(0, self.shown - len(line))
        self.stream.write(f"\r{line}{padding}")
        self.stream.flush()
        self.shown = len(line)

    def clear(self) -> None:
        if self.shown:
            self.stream.write("\r" + " " * self.shown + "\r")
            self.stream.flush()
            self.shown = 0
