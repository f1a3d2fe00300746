"""examples/sleep_tracking.env's state as pydantic v2 models: the baseline of bench_runtime.py's
`reset(state=...)` row (issue 24: "<= 1x pydantic v2 validating the same JSON into equivalent
models", the database choice of τ²-bench, whose `DB` is a pydantic model of tables).

The models have the spec's entities' fields, types and defaults (enums, aware datetimes,
optional and list fields), in pydantic's default (lax) mode, as τ²-bench's are. They check
what a field's type says and nothing across rows: no unique email, no ref to an existing
user, no row or env invariant, no auto-key counters or indexes, all of which `reset` checks
or builds.
"""

from __future__ import annotations

from enum import Enum
from typing import List, Optional

from pydantic import AwareDatetime, BaseModel


class AccountStatus(str, Enum):
    active = "active"
    suspended = "suspended"
    closed = "closed"


class Quality(str, Enum):
    poor = "poor"
    fair = "fair"
    good = "good"
    excellent = "excellent"


class TicketState(str, Enum):
    open = "open"
    in_progress = "in_progress"
    resolved = "resolved"
    closed = "closed"


class User(BaseModel):
    user_id: str
    name: str
    email: str
    status: AccountStatus = AccountStatus.active
    nickname: Optional[str] = None
    tags: List[str] = []


class SleepLog(BaseModel):
    log_id: str
    user: str
    start: AwareDatetime
    end: AwareDatetime
    quality: Quality
    minutes: int


class Ticket(BaseModel):
    ticket_id: str
    user: str
    status: TicketState = TicketState.open


class SleepTrackingDB(BaseModel):
    users: List[User]
    logs: List[SleepLog]
    tickets: List[Ticket]
    now: AwareDatetime
