"""The hand-written ports of bench_runtime.py, with the generated environment's guarantees.

The plain ports (handwritten_sleep_tracking.py, handwritten_wallet.py) return their own row
dicts (an agent that changes the result changes the state), record nothing, and are
all-or-nothing only because each tool happens to check everything before it writes. These
classes keep the same tools, checks and messages, and add by hand what every generated call
pays for (issue 24's baseline for "one tool call: <= 2x"):

- the result is a fresh JSON copy: a new dict per row, its lists copied;
- one trace entry per call: the tool's name, a copy of the arguments, success, the error;
- all-or-nothing on failure: every write goes through an undo journal (field writes, inserts,
  deletes, the auto counter), and a call that fails, or raises, rolls it back. The rules the
  spec checks after the write are checked after the write here too (the env invariant "no
  sleep is logged in the future" on the inserted row; Wallet's `require balance >= 0` after
  the debit), so a late failure really undoes a write, as the generated env's does.

What they still do not do that the generated env does: a size budget on results, a step
budget, snapshots, state hashes kept per row, the checks of rules a call did not touch.
"""

from __future__ import annotations

from typing import Any, Callable, Dict, List, Optional

from handwritten_sleep_tracking import (
    ACCOUNT_STATUSES,
    QUALITIES,
    SleepTrackingSystem,
    _parse_time,
)
from handwritten_wallet import WalletSystem


class TraceEntry:
    """One call as the environment saw it."""

    __slots__ = ("name", "arguments", "success", "error")

    def __init__(
        self, name: str, arguments: Dict[str, Any], success: bool, error: Optional[str]
    ) -> None:
        self.name = name
        self.arguments = arguments
        self.success = success
        self.error = error


class Journal:
    """Undo entries of the current call, in order; rolled back newest first."""

    def __init__(self) -> None:
        self.undo: List[Callable[[], None]] = []

    def set(self, row: Dict[str, Any], field: str, value: Any) -> None:
        old = row[field]
        row[field] = value
        self.undo.append(lambda: row.__setitem__(field, old))

    def insert(self, table: Dict[str, Any], key: str, row: Dict[str, Any]) -> None:
        table[key] = row
        self.undo.append(lambda: table.pop(key))

    def delete(self, table: Dict[str, Any], key: str) -> None:
        row = table.pop(key)
        self.undo.append(lambda: table.__setitem__(key, row))

    def rollback(self) -> None:
        undo = self.undo
        while undo:
            undo.pop()()


class Guarded:
    """`call` with a trace entry per call and a rollback of every failed call."""

    TOOLS: tuple[str, ...]  # the port's own

    def _start_guard(self) -> None:
        self.trace: List[TraceEntry] = []
        self.journal = Journal()

    def call(self, name: str, arguments: Dict[str, Any]) -> dict:
        journal = self.journal
        method = getattr(self, name, None) if name in self.TOOLS else None
        if method is None:
            result = {"success": False, "error": f"Unknown tool: {name}"}
        else:
            try:
                result = method(**arguments)
            except TypeError as error:
                result = {"success": False, "error": str(error)}
            except BaseException:
                journal.rollback()
                raise
        success = result["success"]
        if success:
            journal.undo.clear()
        else:
            journal.rollback()
        self.trace.append(TraceEntry(name, dict(arguments), success, result.get("error")))
        return result


def user_json(user: Dict[str, Any]) -> Dict[str, Any]:
    return {**user, "tags": list(user["tags"])}


class GuardedSleepTrackingSystem(Guarded, SleepTrackingSystem):
    def __init__(self) -> None:
        SleepTrackingSystem.__init__(self)
        self._start_guard()

    def load_state(self, state: Dict[str, Any]) -> None:
        SleepTrackingSystem.load_state(self, state)
        # the auto counter starts after the loaded keys, as the generated table's does: the
        # plain port's scan from 0 would cost every insert after a rollback O(rows)
        numbers = [int(k[4:]) for k in self.logs if k.startswith("LOG-") and k[4:].isdigit()]
        self._log_counter = max(numbers, default=0)
        self._start_guard()

    def get_user(self, user_id: str) -> dict:
        user = self.users.get(user_id)
        if user is None:
            return {"success": False, "error": "user not found"}
        return {"success": True, "data": user_json(user)}

    def add_sleep_log(self, user_id: str, start: str, end: str, quality: str) -> dict:
        if not isinstance(user_id, str):
            return {"success": False, "error": "user_id must be a string"}
        start_time = _parse_time(start)
        if start_time is None:
            return {"success": False, "error": "start must be an ISO 8601 datetime"}
        end_time = _parse_time(end)
        if end_time is None:
            return {"success": False, "error": "end must be an ISO 8601 datetime"}
        if quality not in QUALITIES:
            return {"success": False, "error": f"quality must be one of {', '.join(QUALITIES)}"}

        user = self.users.get(user_id)
        if user is None:
            return {"success": False, "error": "user not found"}
        if user["status"] != "active":
            return {"success": False, "error": "account is not active"}
        if not end_time > start_time:
            return {"success": False, "error": "end must be after start"}

        counter = self._log_counter
        self.journal.undo.append(lambda: setattr(self, "_log_counter", counter))
        while True:
            self._log_counter += 1
            log_id = f"LOG-{self._log_counter:04d}"
            if log_id not in self.logs:
                break
        log = {
            "log_id": log_id,
            "user": user_id,
            "start": start,
            "end": end,
            "quality": quality,
            "minutes": int((end_time - start_time).total_seconds() // 60),
        }
        self.journal.insert(self.logs, log_id, log)
        # the env invariant, after the write as the spec checks it: only the new row can break it
        if end_time > _parse_time(self.now):  # type: ignore[operator]
            return {"success": False, "error": "a night cannot end in the future"}
        return {"success": True, "data": dict(log)}

    def set_status(self, user_id: str, status: str) -> dict:
        if not isinstance(user_id, str):
            return {"success": False, "error": "user_id must be a string"}
        if status not in ACCOUNT_STATUSES:
            return {
                "success": False,
                "error": f"status must be one of {', '.join(ACCOUNT_STATUSES)}",
            }
        user = self.users.get(user_id)
        if user is None:
            return {"success": False, "error": "user not found"}
        self.journal.set(user, "status", status)
        return {"success": True, "data": user_json(user)}

    def delete_sleep_log(self, log_id: str, user_id: str) -> dict:
        log = self.logs.get(log_id)
        if log is None:
            return {"success": False, "error": "log not found"}
        if log["user"] != user_id:
            return {"success": False, "error": "not your log"}
        self.journal.delete(self.logs, log_id)
        return {"success": True, "data": "deleted"}


class GuardedWalletSystem(Guarded, WalletSystem):
    def __init__(self) -> None:
        WalletSystem.__init__(self)
        self._start_guard()

    def load_state(self, state: Dict[str, Any]) -> None:
        WalletSystem.load_state(self, state)
        self._start_guard()

    def spend(self, account_id: str, amount: int) -> dict:
        if isinstance(amount, bool) or not isinstance(amount, int):
            return {"success": False, "error": "amount must be an integer"}
        account = self.accounts.get(account_id)
        if account is None:
            return {"success": False, "error": "account not found"}
        if not amount > 0:
            return {"success": False, "error": "amount must be positive"}
        self.journal.set(account, "balance", account["balance"] - amount)
        if account["balance"] < 0:  # the spec's require, after the write
            return {"success": False, "error": "insufficient funds"}
        return {"success": True, "data": dict(account)}
