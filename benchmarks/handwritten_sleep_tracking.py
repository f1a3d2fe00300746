"""examples/sleep_tracking.env ported by hand to an EnvScaler-style Python class.

The baseline for benchmarks/bench_runtime.py. It is written the way EnvScaler's environments
are (see /work/shared/reference/envscaler): state as dicts of dicts keyed by id, datetimes as
ISO 8601 strings, one method per tool that validates with `if` checks and returns
`{"success": True, "data": ...}` or `{"success": False, "error": ...}`; no transactions, no
invariant re-checks after a tool runs. Each tool makes the same checks as the spec, in the same
order, with the same messages, and has the same effects (same auto keys, same rows). The env
invariant "no sleep is logged in the future" is the one rule the spec checks after the write;
here it is an `if` before the insert, which is how a hand-written class enforces it.
"""

from __future__ import annotations

import hashlib
import json
from datetime import datetime, timezone
from typing import Any, Dict, List, Optional, TypedDict

ACCOUNT_STATUSES = ("active", "suspended", "closed")
QUALITIES = ("poor", "fair", "good", "excellent")


class UserInfo(TypedDict):
    user_id: str
    name: str
    email: str
    status: str  # active | suspended | closed
    nickname: Optional[str]
    tags: List[str]


class SleepLogInfo(TypedDict):
    log_id: str
    user: str  # user_id
    start: str  # ISO 8601
    end: str
    quality: str  # poor | fair | good | excellent
    minutes: int


class TicketInfo(TypedDict):
    ticket_id: str
    user: str
    status: str  # open | in_progress | resolved | closed


def _parse_time(text: Any) -> Optional[datetime]:
    if not isinstance(text, str) or "T" not in text:
        return None
    try:
        value = datetime.fromisoformat(text)
    except ValueError:
        return None
    if value.tzinfo is None:
        return value.replace(tzinfo=timezone.utc)
    return value.astimezone(timezone.utc)


class SleepTrackingSystem:
    def __init__(self) -> None:
        """Backend of a sleep-tracking app: users log nights of sleep."""
        # Users: {user_id: UserInfo}
        self.users: Dict[str, UserInfo] = {}
        # Sleep logs: {log_id: SleepLogInfo}
        self.logs: Dict[str, SleepLogInfo] = {}
        # Tickets: {ticket_id: TicketInfo}
        self.tickets: Dict[str, TicketInfo] = {}
        # The current time (ISO 8601); the only clock tools see.
        self.now: str = ""
        self._log_counter = 0

        # Constraints reminder:
        # - a night ends after it starts
        # - no sleep is logged in the future (end <= now)
        # - a user's email is unique; a log's user exists

    def load_state(self, state: Dict[str, Any]) -> None:
        """Load an init_config-style state: tables as lists of rows or objects keyed by id."""

        def keyed(rows: Any, key: str) -> Dict[str, Any]:
            if isinstance(rows, list):
                return {row[key]: dict(row) for row in rows}
            return {k: {**row, key: k} for k, row in rows.items()}

        self.users = keyed(state.get("users", {}), "user_id")
        for user in self.users.values():
            user.setdefault("status", "active")
            user.setdefault("nickname", None)
            user["tags"] = list(user.get("tags", []))
        self.logs = keyed(state.get("logs", {}), "log_id")
        self.tickets = keyed(state.get("tickets", {}), "ticket_id")
        self.now = state["now"]
        self._log_counter = 0

    def call(self, name: str, arguments: Dict[str, Any]) -> dict:
        """Dispatch a tool call the way EnvScaler's runner does: the method, keyword arguments."""
        method = getattr(self, name, None) if name in self.TOOLS else None
        if method is None:
            return {"success": False, "error": f"Unknown tool: {name}"}
        try:
            return method(**arguments)
        except TypeError as error:
            return {"success": False, "error": str(error)}

    def get_user(self, user_id: str) -> dict:
        """
        Return one user's profile.

        Args:
            user_id (str): The user's id, e.g. U001.

        Returns:
            dict: {"success": True, "data": UserInfo} or {"success": False, "error": str}
        """
        user = self.users.get(user_id)
        if user is None:
            return {"success": False, "error": "user not found"}
        return {"success": True, "data": user}

    def add_sleep_log(self, user_id: str, start: str, end: str, quality: str) -> dict:
        """
        Record one night of sleep for an active user.

        Args:
            user_id (str): The user's id.
            start (str): ISO 8601 start of the night.
            end (str): ISO 8601 end of the night.
            quality (str): poor, fair, good or excellent.

        Returns:
            dict: {"success": True, "data": SleepLogInfo} or {"success": False, "error": str}

        Constraints:
            - The user exists and is active; end is after start; end is not in the future.
        """
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
        if end_time > _parse_time(self.now):
            return {"success": False, "error": "a night cannot end in the future"}

        while True:
            self._log_counter += 1
            log_id = f"LOG-{self._log_counter:04d}"
            if log_id not in self.logs:
                break
        log: SleepLogInfo = {
            "log_id": log_id,
            "user": user_id,
            "start": start,
            "end": end,
            "quality": quality,
            "minutes": int((end_time - start_time).total_seconds() // 60),
        }
        self.logs[log_id] = log
        return {"success": True, "data": log}

    def set_status(self, user_id: str, status: str) -> dict:
        """
        Change the status of a user's account.

        Args:
            user_id (str): The user's id.
            status (str): active, suspended or closed.

        Returns:
            dict: {"success": True, "data": UserInfo} or {"success": False, "error": str}
        """
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
        user["status"] = status
        return {"success": True, "data": user}

    def delete_sleep_log(self, log_id: str, user_id: str) -> dict:
        """
        Delete one of the user's own sleep logs.

        Args:
            log_id (str): The log's id.
            user_id (str): The id of the user who owns it.

        Returns:
            dict: {"success": True, "data": "deleted"} or {"success": False, "error": str}
        """
        log = self.logs.get(log_id)
        if log is None:
            return {"success": False, "error": "log not found"}
        if log["user"] != user_id:
            return {"success": False, "error": "not your log"}
        del self.logs[log_id]
        return {"success": True, "data": "deleted"}

    TOOLS = ("get_user", "add_sleep_log", "set_status", "delete_sleep_log")

    def state_hash(self) -> str:
        """SHA-256 of the state as canonical JSON (sorted keys), for comparing runs."""
        state = {"logs": self.logs, "now": self.now, "tickets": self.tickets, "users": self.users}
        text = json.dumps(state, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
        return hashlib.sha256(text.encode("utf-8")).hexdigest()
