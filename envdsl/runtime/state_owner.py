"""What the state loaders (loading.py) see of an environment: its declarations and the
world they fill. The Environment class has all of it; the loaders are typed against this
protocol, not the class, because the class calls them."""

from __future__ import annotations

from typing import Any, ClassVar, Protocol

from envdsl.runtime.snapshots import World
from envdsl.runtime.specs import ScalarSpec, TableSpec
from envdsl.runtime.table import Table


class StateOwner(Protocol):
    TABLES: ClassVar[dict[str, TableSpec]]
    SCALARS: ClassVar[dict[str, ScalarSpec]]
    ROW_INVARIANTS: ClassVar[dict[str, tuple[tuple[str, str], ...]]]  # table -> (text, method)
    ENV_INVARIANTS: ClassVar[dict[str, str]]  # method -> text
    coverage: list[int] | None
    step_budget: int
    _world: World
    _tables: dict[str, Table[Any]]
    _scalars: dict[str, Any]

    def set_scalar_initial(self, name: str, value: Any) -> None:
        """Set a scalar of the initial state (an owned copy of `value`)."""

    def _verify_scalar_refs(self) -> None:
        """Fail for a ref a scalar state field holds to a row that does not exist."""

    def _start_whole_state_steps(self) -> int:
        """Give a whole-state check its step budget; returns a call's, to set back."""

    def _next_auto_key(self, table: Table[Any]) -> str:
        """The next `auto` key of `table`."""
