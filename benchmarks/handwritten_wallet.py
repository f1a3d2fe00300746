"""The inline `Wallet` spec of benchmarks/bench_runtime.py, ported by hand EnvScaler-style.

The spec's `spend` writes the new balance and then fails a `require`, so the generated
environment has to roll the write back. A hand-written class checks before it writes (the
cheapest correct way to reject the call); the state ends the same either way.
"""

from __future__ import annotations

from typing import Any, Dict, TypedDict


class AccountInfo(TypedDict):
    account_id: str
    owner: str
    balance: int  # cents


class WalletSystem:
    def __init__(self) -> None:
        """Prepaid wallets: members spend their balance."""
        # Accounts: {account_id: AccountInfo}
        self.accounts: Dict[str, AccountInfo] = {}

    def load_state(self, state: Dict[str, Any]) -> None:
        rows = state.get("accounts", {})
        if isinstance(rows, list):
            self.accounts = {row["account_id"]: dict(row) for row in rows}
        else:
            self.accounts = {k: {**row, "account_id": k} for k, row in rows.items()}

    def call(self, name: str, arguments: Dict[str, Any]) -> dict:
        method = getattr(self, name, None) if name in self.TOOLS else None
        if method is None:
            return {"success": False, "error": f"Unknown tool: {name}"}
        try:
            return method(**arguments)
        except TypeError as error:
            return {"success": False, "error": str(error)}

    def spend(self, account_id: str, amount: int) -> dict:
        """
        Debit an account; the balance may not go negative.

        Args:
            account_id (str): The account's id.
            amount (int): Amount in cents.

        Returns:
            dict: {"success": True, "data": AccountInfo} or {"success": False, "error": str}
        """
        if isinstance(amount, bool) or not isinstance(amount, int):
            return {"success": False, "error": "amount must be an integer"}
        account = self.accounts.get(account_id)
        if account is None:
            return {"success": False, "error": "account not found"}
        if not amount > 0:
            return {"success": False, "error": "amount must be positive"}
        if account["balance"] - amount < 0:
            return {"success": False, "error": "insufficient funds"}
        account["balance"] -= amount
        return {"success": True, "data": account}

    TOOLS = ("spend",)
