"""Exceptions that carry a tool call's failure to the transaction boundary."""

from __future__ import annotations


class Fail(Exception):
    """The call fails with this message; the runtime rolls the state back.

    Raised by `require`, `let ... else`, `fail`, a missing key, a violated invariant, an
    illegal transition, a dangling ref, a uniqueness clash or an exhausted step budget.
    """

    # slots: no instance dict to make for the three (every failed call makes one); `site` may
    # be passed by position (generated `require`s do: the keyword costs a dict per call)
    __slots__ = ("message", "site", "rule")

    def __init__(self, message: str, site: int | None = None, *, rule: str | None = None) -> None:
        self.args = (message,)  # what Exception.__init__ sets, without the call (every failure)
        self.message = message
        # where it came from: a `require`/`let ... else` (site: an index into the generated
        # class's SITES) or a declarative rule (rule: "invariant: ...", "unique: User.email",
        # "ref: Loan.book", "transitions: Ticket.status", "key: User", "delete: User")
        self.site = site
        self.rule = rule

    def __reduce__(self) -> tuple[object, ...]:
        # pickled whole (process and Ray workers send failures back): the default would call
        # Fail(message) and drop the site and the rule
        return (_rebuilt_fail, (self.message, self.site, self.rule))


def _rebuilt_fail(message: str, site: int | None, rule: str | None) -> Fail:
    return Fail(message, site=site, rule=rule)


class BadValue(Exception):
    """A JSON value that does not fit its declared type (arguments, states, init files)."""

    __slots__ = ("path", "message")  # no instance dict to make (every rejected argument)

    def __init__(self, path: str, message: str) -> None:
        # what Exception.__init__ sets, without the call (every rejected argument)
        self.args = (f"{path}: {message}" if path else message,)
        self.path = path
        self.message = message

    def __reduce__(self) -> tuple[object, ...]:
        # the default passes the one formatted text to __init__, which takes two arguments
        return (BadValue, (self.path, self.message))
