"""The long explanation of every diagnostic code, shown by `envdsl explain CODE`.

Each entry says what the rule is and why it exists, then gives a small spec that breaks the
rule (`wrong`) and the same spec repaired (`right`). The examples are complete specs so that
tests can run them through the checker: `wrong` must report the code, `right` must not.
Internal errors (E9001) have no spec that triggers them on purpose, so their examples are empty.
"""

from __future__ import annotations

import textwrap
from dataclasses import dataclass, field
from typing import Mapping


@dataclass(frozen=True)
class Explanation:
    text: str
    wrong: str
    right: str
    # other files the examples name (a task file's env), by name; they lie next to the example
    files: Mapping[str, str] = field(default_factory=dict)


def _spec(text: str) -> str:
    return textwrap.dedent(text).strip("\n") + "\n" if text.strip() else ""


def _explain(
    text: str, wrong: str, right: str, files: Mapping[str, str] | None = None
) -> Explanation:
    extra = {name: _spec(content) for name, content in (files or {}).items()}
    return Explanation(" ".join(text.split()), _spec(wrong), _spec(right), extra)


# the env the task-file examples name (E1020-E1023, W5020)
_COUNTER = {"counter.env": r'''
        env Counter {
          state {
            count: int = 0
          }
          action add(n: int) {
            """Add n to the counter."""
            count += n
          }
          task add_two {
            """Add two to the counter."""
            solution { add(n=2) }
            check "the counter is 2": count == 2
          }
        }
        '''}
_ADD_THREE = '''
          task add_three {
            """Add three to the counter."""
            solution { add(n=3) }
            check "the counter is 3": count == 3
          }'''


def _task_file(target: str, tasks: str = _ADD_THREE) -> str:
    return f'        tasks for "{target}" {{{tasks}\n        }}\n'


EXPLANATIONS: dict[str, Explanation] = {
    # ---- E0xx: syntax ----------------------------------------------------------------------
    "E0001": _explain(
        """The text does not follow the grammar of envdsl. Blocks are delimited by braces, not
        by a colon and indentation as in Python, and every `{` needs its `}`. The message names
        what the parser found and what it expected at that point; the help line points out the
        usual Python habits.""",
        r'''
        env Demo {
          state {
            count: int = 0
          }
          query get_count() -> int:
            """Return the counter."""
            return count
        }
        ''',
        r'''
        env Demo {
          state {
            count: int = 0
          }
          query get_count() -> int {
            """Return the counter."""
            return count
          }
        }
        ''',
    ),
    "E0002": _explain(
        """A character that cannot start any token, or a string that is not closed on its line.
        envdsl writes boolean operators as words (`and`, `or`, `not`), not `&&`, `||` or `!`.
        A string in double quotes must end on the line it starts on; use `\"\"\"...\"\"\"` for
        text that spans several lines.""",
        r'''
        env Demo {
          state {
            count: int = 0
          }
          action add(n: int) -> int {
            """Add n to the counter."""
            require n > 0 && n < 100 else "n must be between 1 and 99"
            count += n
            return count
          }
        }
        ''',
        r'''
        env Demo {
          state {
            count: int = 0
          }
          action add(n: int) -> int {
            """Add n to the counter."""
            require n > 0 and n < 100 else "n must be between 1 and 99"
            count += n
            return count
          }
        }
        ''',
    ),
    "E0003": _explain(
        """A backslash in a string starts an escape sequence, and only `\\n \\t \\r \\\\ \\"
        \\' \\0 \\{ \\}` are defined. An unknown escape such as `\\d` is almost always a
        backslash that was meant literally; silently keeping or dropping it would change the
        text, so it is an error. Write a literal backslash as `\\\\`.""",
        r'''
        env Demo {
          query data_folder() -> str {
            """Return the folder that holds the data."""
            return "C:\data"
          }
        }
        ''',
        r'''
        env Demo {
          query data_folder() -> str {
            """Return the folder that holds the data."""
            return "C:\\data"
          }
        }
        ''',
    ),
    "E0004": _explain(
        """A spec file holds exactly one `env` (and a stdlib file exactly one `module`). One
        environment per file keeps the mapping from spec to generated module and tool schemas
        one to one. Split several environments into several files.""",
        r'''
        env Shop {
          """The shop front."""
        }

        env Warehouse {
          """The warehouse behind the shop."""
        }
        ''',
        r'''
        env Shop {
          """The shop front."""
        }
        ''',
    ),
    "E0005": _explain(
        """Only a variable (`x = ...`), a field (`row.f = ...`) or a map entry (`m[k] = ...`)
        can be assigned. The left-hand side of `=` here is a computed value, such as a call,
        which has no place to store into. Compute the new value on the right instead.""",
        r'''
        env Demo {
          entity User {
            key user_id: str
            email: str
          }
          state {
            users: table User
          }
          action set_email(user_id: str, email: str) {
            """Change a user's email address."""
            let u = users.get(user_id) else "user not found"
            lower(u.email) = lower(email)
          }
        }
        ''',
        r'''
        env Demo {
          entity User {
            key user_id: str
            email: str
          }
          state {
            users: table User
          }
          action set_email(user_id: str, email: str) {
            """Change a user's email address."""
            let u = users.get(user_id) else "user not found"
            u.email = lower(email)
          }
        }
        ''',
    ),
    "E0006": _explain(
        """A step of a task's `solution` is a call of a tool with named arguments,
        `tool(arg=value)`, optionally bound with `let x = tool(...)`. Named arguments are
        required because the steps are replayed as the JSON calls an agent would make, and JSON
        tool calls have no argument order.""",
        r'''
        env Demo {
          state {
            count: int = 0
          }
          action add(n: int) -> int {
            """Add n to the counter."""
            count += n
            return count
          }
          task add_five {
            """Add five to the counter."""
            init { count = 0 }
            solution { add(5) }
            check "the counter is five": count == 5
          }
        }
        ''',
        r'''
        env Demo {
          state {
            count: int = 0
          }
          action add(n: int) -> int {
            """Add n to the counter."""
            count += n
            return count
          }
          task add_five {
            """Add five to the counter."""
            init { count = 0 }
            solution { add(n=5) }
            check "the counter is five": count == 5
          }
        }
        ''',
    ),
    "E0007": _explain(
        """`break` and `continue` only make sense inside a `for` loop. To leave a tool early,
        use `return` (success) or `fail "why"` (failure).""",
        r'''
        env Demo {
          state {
            count: int = 0
          }
          action reset() -> int {
            """Set the counter back to zero."""
            if count == 0 {
              break
            }
            count = 0
            return count
          }
        }
        ''',
        r'''
        env Demo {
          state {
            count: int = 0
          }
          action reset() -> int {
            """Set the counter back to zero."""
            if count == 0 {
              return 0
            }
            count = 0
            return count
          }
        }
        ''',
    ),
    "E0008": _explain(
        """An f-string hole `{...}` must hold one expression and be closed. A `{` that is meant
        literally is written `{{` (and `}` as `}}`). An unbalanced or empty hole is usually a
        typo that would otherwise put the raw text into a user-facing message.""",
        r'''
        env Demo {
          entity User {
            key user_id: str
          }
          state {
            users: table User
          }
          query get_user(user_id: str) -> User {
            """Return one user."""
            let u = users.get(user_id) else f"user {user_id not found"
            return u
          }
        }
        ''',
        r'''
        env Demo {
          entity User {
            key user_id: str
          }
          state {
            users: table User
          }
          query get_user(user_id: str) -> User {
            """Return one user."""
            let u = users.get(user_id) else f"user {user_id} not found"
            return u
          }
        }
        ''',
    ),
    "E0009": _explain(
        """A task has at most one `init` section and at most one `solution` section. Two of
        them leave it unclear which initial state or which trajectory is meant; merge them
        into one.""",
        r'''
        env Demo {
          state {
            count: int
            limit: int = 10
          }
          action add(n: int) {
            """Add n to the counter."""
            count += n
          }
          task fill {
            """Bring the counter up to the limit."""
            init { count = 0 }
            init { limit = 5 }
            solution { add(n=5) }
            check "the counter is at the limit": count == limit
          }
        }
        ''',
        r'''
        env Demo {
          state {
            count: int
            limit: int = 10
          }
          action add(n: int) {
            """Add n to the counter."""
            count += n
          }
          task fill {
            """Bring the counter up to the limit."""
            init {
              count = 0
              limit = 5
            }
            solution { add(n=5) }
            check "the counter is at the limit": count == limit
          }
        }
        ''',
    ),
    "E0020": _explain(
        """A spec file has at most 1,000,000 characters and a line at most 10,000. Specs come
        from people and LLMs and are untrusted; past these limits the checker reports at once
        instead of spending time and memory on the input. Split a long line (a string can be
        joined from shorter ones) or a long spec (into modules).""",
        """
        env Demo {
          query notes() -> str {
            \"\"\"The release notes.\"\"\"
            return "LONG"
          }
        }
        """.replace("LONG", "x" * 10_001),
        r'''
        env Demo {
          query notes() -> str {
            """The release notes."""
            return "short"
          }
        }
        ''',
    ),
    "E0021": _explain(
        """Brackets nest at most 64 deep, statement blocks at most 12 deep in one body, and an
        expression at most 40 operators, calls or attributes deep. Deeper code is unreadable,
        and the generated Python would break CPython's own nesting limits. Move the inner part
        into a `fn` or a `let` variable.""",
        """
        env Demo {
          query flag() -> bool {
            \"\"\"A flag.\"\"\"
            return NOTS true
          }
        }
        """.replace("NOTS", "not " * 42),
        r'''
        env Demo {
          query flag() -> bool {
            """A flag."""
            return true
          }
        }
        ''',
    ),
    "E0022": _explain(
        """An integer literal has at most 1,000 digits. Longer numbers are no identifiers,
        amounts or counts that a tool needs, and converting them costs time quadratic in their
        length (CPython refuses past 4,300 digits).""",
        """
        env Demo {
          query big() -> int {
            \"\"\"A number.\"\"\"
            return DIGITS
          }
        }
        """.replace("DIGITS", "1" + "0" * 1_000),
        r'''
        env Demo {
          query big() -> int {
            """A number."""
            return 1000
          }
        }
        ''',
    ),
    "E0030": _explain(
        """A task file holds one `tasks for "env.env" { ... }` block and nothing else, and a
        spec file holds an env and no `tasks for` block. The block names the env its tasks are
        for, so a file that declares the env too has no use for it: the block is left out. Write
        the tasks inside the env, or move the block to a task file of its own.""",
        r'''
        env Counter {
          state {
            count: int = 0
          }
          action add(n: int) {
            """Add n to the counter."""
            count += n
          }
        }
        tasks for "counter.env" {
          task add_three {
            """Add three to the counter."""
            solution { add(n=3) }
            check "the counter is 3": count == 3
          }
        }
        ''',
        r'''
        env Counter {
          state {
            count: int = 0
          }
          action add(n: int) {
            """Add n to the counter."""
            count += n
          }
          task add_three {
            """Add three to the counter."""
            solution { add(n=3) }
            check "the counter is 3": count == 3
          }
        }
        ''',
    ),
    # ---- E1xx: names -----------------------------------------------------------------------
    "E1001": _explain(
        """A name must be a local variable, a parameter, a state field, a constant, an enum or
        a declared type or function in scope. Misspelled names are reported with the closest
        known name, because a generated environment must never fail at run time on an
        undefined name. A new variable is declared with `let x = e`, not `x = e` as in Python.""",
        r'''
        env Demo {
          state {
            total: int = 0
          }
          action add(amount: int) -> int {
            """Add an amount to the total."""
            total += amount
            return totl
          }
        }
        ''',
        r'''
        env Demo {
          state {
            total: int = 0
          }
          action add(amount: int) -> int {
            """Add an amount to the total."""
            total += amount
            return total
          }
        }
        ''',
    ),
    "E1002": _explain(
        """A type must be a builtin type (`int`, `float`, `bool`, `str`, `date`, `datetime`,
        `duration`, `json`, `list[T]`, `set[T]`, `map[K, V]`) or an enum, record or entity
        declared in the env or an imported module. Names from other languages, such as
        `string`, `integer` or `dict`, are not types here.""",
        r"""
        env Demo {
          entity User {
            key user_id: str
            name: string
          }
          state {
            users: table User
          }
        }
        """,
        r"""
        env Demo {
          entity User {
            key user_id: str
            name: str
          }
          state {
            users: table User
          }
        }
        """,
    ),
    "E1003": _explain(
        """A record or entity has exactly the fields it declares. Reading or writing any other
        field is an error, because generated rows are fixed dataclasses and their JSON form is
        checked against the schema. The help line suggests the closest declared field.""",
        r'''
        env Demo {
          entity User {
            key user_id: str
            email: str
          }
          state {
            users: table User
          }
          query get_email(user_id: str) -> str {
            """Return a user's email address."""
            let u = users.get(user_id) else "user not found"
            return u.emial
          }
        }
        ''',
        r'''
        env Demo {
          entity User {
            key user_id: str
            email: str
          }
          state {
            users: table User
          }
          query get_email(user_id: str) -> str {
            """Return a user's email address."""
            let u = users.get(user_id) else "user not found"
            return u.email
          }
        }
        ''',
    ),
    "E1004": _explain(
        """An enum value is written `Enum.member` and the member must be declared in the enum.
        An undeclared member could never be stored or sent to the agent, so it is rejected at
        compile time; add it to the enum or use a member that exists.""",
        r'''
        env Demo {
          enum Status { active, closed }
          entity Account {
            key account_id: str
            status: Status = Status.active
          }
          state {
            accounts: table Account
          }
          action suspend(account_id: str) {
            """Suspend an account."""
            let a = accounts.get(account_id) else "account not found"
            a.status = Status.suspended
          }
        }
        ''',
        r'''
        env Demo {
          enum Status { active, suspended, closed }
          entity Account {
            key account_id: str
            status: Status = Status.active
          }
          state {
            accounts: table Account
          }
          action suspend(account_id: str) {
            """Suspend an account."""
            let a = accounts.get(account_id) else "account not found"
            a.status = Status.suspended
          }
        }
        ''',
    ),
    "E1005": _explain(
        """A call must name a builtin function (`len`, `abs`, `round`, `count`, `sum`, `min`,
        `max`, date and time helpers, ...), a `fn` declared in the env, an imported stdlib
        function, or a record or entity constructor. Functions from other languages, such as
        `length` or `size`, do not exist; the help line suggests the closest one.""",
        r'''
        env Demo {
          state {
            names: list[str] = []
          }
          query count_names() -> int {
            """Return how many names are stored."""
            return length(names)
          }
        }
        ''',
        r'''
        env Demo {
          state {
            names: list[str] = []
          }
          query count_names() -> int {
            """Return how many names are stored."""
            return len(names)
          }
        }
        ''',
    ),
    "E1006": _explain(
        """A named argument must match a parameter of the called tool or fn, or a field of the
        constructed record or entity. An unknown name is usually a misspelling or a field from
        a different type; it is an error rather than ignored so that no value is silently
        lost.""",
        r'''
        env Demo {
          entity User {
            key user_id: str
            name: str
          }
          state {
            users: table User
          }
          action add_user(user_id: str, name: str) -> User {
            """Create a user."""
            return users.insert(User(user_id=user_id, full_name=name))
          }
        }
        ''',
        r'''
        env Demo {
          entity User {
            key user_id: str
            name: str
          }
          state {
            users: table User
          }
          action add_user(user_id: str, name: str) -> User {
            """Create a user."""
            return users.insert(User(user_id=user_id, name=name))
          }
        }
        ''',
    ),
    "E1007": _explain(
        """`import std.<name>` brings in a module of the standard library (the files in
        `stdlib/`), such as `std.time`. Importing a module that does not exist is an error;
        the builtins (`len`, `days`, `datetime`, ...) need no import at all.""",
        r"""
        import std.clock

        env Demo {
          state {
            now: datetime
          }
        }
        """,
        r"""
        env Demo {
          state {
            now: datetime
          }
        }
        """,
    ),
    "E1008": _explain(
        """A task's `init` (and `initial.<field>` in a check) can only name fields that the
        `state` block declares. A misspelled state field in an initial state would otherwise
        leave the real field empty without notice.""",
        r'''
        env Demo {
          entity User {
            key user_id: str
          }
          state {
            users: table User
          }
          action add_user(user_id: str) {
            """Register a new user."""
            users.insert(User(user_id=user_id))
          }
          task register {
            """Register the user U1."""
            init { user = [] }
            solution { add_user(user_id="U1") }
            check "U1 is registered": "U1" in users
          }
        }
        ''',
        r'''
        env Demo {
          entity User {
            key user_id: str
          }
          state {
            users: table User
          }
          action add_user(user_id: str) {
            """Register a new user."""
            users.insert(User(user_id=user_id))
          }
          task register {
            """Register the user U1."""
            init { users = [] }
            solution { add_user(user_id="U1") }
            check "U1 is registered": "U1" in users
          }
        }
        ''',
    ),
    "E1009": _explain(
        """A solution step and `called("name")`/`calls("name")` in a check must name a tool
        that the env declares. A check over a tool that does not exist would always be false
        (or always true under `not`), which makes the task meaningless. A solution step also
        cannot call an `internal` tool, since the agent cannot see it.""",
        r'''
        env Demo {
          state {
            count: int = 0
          }
          action add(n: int) -> int {
            """Add n to the counter."""
            count += n
            return count
          }
          task add_two {
            """Add two to the counter."""
            init { count = 0 }
            solution { increment(n=2) }
            check "the counter is two": count == 2
          }
        }
        ''',
        r'''
        env Demo {
          state {
            count: int = 0
          }
          action add(n: int) -> int {
            """Add n to the counter."""
            count += n
            return count
          }
          task add_two {
            """Add two to the counter."""
            init { count = 0 }
            solution { add(n=2) }
            check "the counter is two": count == 2
          }
        }
        ''',
    ),
    "E1010": _explain(
        """Two declarations in one scope have the same name: two tools, two types, two fields
        of one entity, two parameters of one tool, and so on. The agent would see two tools
        with one name, and a reader cannot tell which one is meant; rename or remove one of
        them.""",
        r'''
        env Demo {
          state {
            count: int = 0
          }
          query get_count() -> int {
            """Return the counter."""
            return count
          }
          query get_count() -> int {
            """Return the counter, again."""
            return count
          }
        }
        ''',
        r'''
        env Demo {
          state {
            count: int = 0
          }
          query get_count() -> int {
            """Return the counter."""
            return count
          }
        }
        ''',
    ),
    "E1011": _explain(
        """A method must exist on the type of the value it is called on: lists have `append`,
        `remove`, `count`, strings have `lower`, `upper`, `strip`, `startswith`, `split`, ...,
        tables have `get`, `insert`, `delete`. A misspelled method is reported with the closest
        one; for a method from another language, such as `push` or `toLowerCase`, the help line
        lists the methods the type has.""",
        r'''
        env Demo {
          entity User {
            key user_id: str
            tags: list[str] = []
          }
          state {
            users: table User
          }
          action tag_user(user_id: str, tag: str) {
            """Add a tag to a user."""
            let u = users.get(user_id) else "user not found"
            u.tags.push(tag)
          }
        }
        ''',
        r'''
        env Demo {
          entity User {
            key user_id: str
            tags: list[str] = []
          }
          state {
            users: table User
          }
          action tag_user(user_id: str, tag: str) {
            """Add a tag to a user."""
            let u = users.get(user_id) else "user not found"
            u.tags.append(tag)
          }
        }
        ''',
    ),
    "E1012": _explain(
        """Each parameter or field gets at most one argument in a call. When the same name is
        given twice, one value would silently win; say which one you mean.""",
        r'''
        env Demo {
          entity User {
            key user_id: str
            name: str
          }
          state {
            users: table User
          }
          action add_user(user_id: str, name: str) -> User {
            """Create a user."""
            return users.insert(User(user_id=user_id, name=name, name=user_id))
          }
        }
        ''',
        r'''
        env Demo {
          entity User {
            key user_id: str
            name: str
          }
          state {
            users: table User
          }
          action add_user(user_id: str, name: str) -> User {
            """Create a user."""
            return users.insert(User(user_id=user_id, name=name))
          }
        }
        ''',
    ),
    "E1020": _explain(
        """The env file a task file names does not exist or cannot be read (not a regular file,
        not UTF-8, too large). The path is relative to the task file's directory: `tasks for
        "shop.env"` means the shop.env next to the task file.""",
        _task_file("countr.env"),
        _task_file("counter.env"),
        _COUNTER,
    ),
    "E1021": _explain(
        """A task file names its env inside its own directory tree, as `init from` names its
        JSON file: no absolute path, no `..` that leads out, no symlink that points outside.
        Task files come from the same untrusted authors as specs; keep them next to the env or
        above it.""",
        _task_file("/specs/counter.env"),
        _task_file("counter.env"),
        _COUNTER,
    ),
    "E1022": _explain(
        """A task file names the spec of the env its tasks are for. The file it names holds no
        env (it is another task file, or empty), or the task file was given together with
        another spec than the one it names. Name the env's own file, and give each task file
        with that env or on its own.""",
        _task_file("more.tasks.env"),
        _task_file("counter.env"),
        {**_COUNTER, "more.tasks.env": _task_file("counter.env", _ADD_THREE.replace("three", "3"))},
    ),
    "E1023": _explain(
        """Task names are unique across a spec and all its task files: a harness picks a task
        by name. This task has the name of one the spec (or an earlier task file) declares, and
        is left out; rename it.""",
        _task_file("counter.env", _ADD_THREE.replace("add_three", "add_two")),
        _task_file("counter.env"),
        _COUNTER,
    ),
    # ---- E2xx: types -----------------------------------------------------------------------
    "E2001": _explain(
        """A value of one type is used where another type is expected: in an assignment, an
        argument, a return, a default or an initial state. There are no implicit conversions
        (only `int` widens to `float`), so an environment never stores a string in an `int`
        field. Convert explicitly (`str(n)`) or fix the declared type.""",
        r'''
        env Demo {
          entity Item {
            key sku: str
            stock: int
          }
          state {
            items: table Item
          }
          action set_stock(sku: str, stock: str) {
            """Set the stock of an item."""
            let item = items.get(sku) else "item not found"
            item.stock = stock
          }
        }
        ''',
        r'''
        env Demo {
          entity Item {
            key sku: str
            stock: int
          }
          state {
            items: table Item
          }
          action set_stock(sku: str, stock: int) {
            """Set the stock of an item."""
            let item = items.get(sku) else "item not found"
            item.stock = stock
          }
        }
        ''',
    ),
    "E2002": _explain(
        """An operator is applied to operand types it is not defined for, such as `str + int`
        or `date * int`. Python would fail at run time; envdsl rejects it at compile time.
        Convert one side (`str(n)`) or use an f-string for messages.""",
        r'''
        env Demo {
          state {
            count: int = 0
          }
          query describe() -> str {
            """Describe the counter."""
            return "the counter is " + count
          }
        }
        ''',
        r'''
        env Demo {
          state {
            count: int = 0
          }
          query describe() -> str {
            """Describe the counter."""
            return f"the counter is {count}"
          }
        }
        ''',
    ),
    "E2003": _explain(
        """Conditions of `if`, `require`, comprehension filters, checks and invariants must be
        of type `bool`. There is no truthiness: an empty list, `0` or `""` is not false.
        Write the comparison you mean, such as `len(xs) > 0` or `x != none`.""",
        r'''
        env Demo {
          state {
            names: list[str] = []
          }
          action add_name(name: str) -> int {
            """Add a name to the list."""
            require len(name) else "the name is empty"
            names.append(name)
            return len(names)
          }
        }
        ''',
        r'''
        env Demo {
          state {
            names: list[str] = []
          }
          action add_name(name: str) -> int {
            """Add a name to the list."""
            require len(name) > 0 else "the name is empty"
            names.append(name)
            return len(names)
          }
        }
        ''',
    ),
    "E2004": _explain(
        """A call passes more positional arguments than the function has parameters. Extra
        arguments would be ignored or shift the others; check the signature of the function
        (and prefer named arguments for anything but the simplest calls). The same code
        reports a generic type with the wrong number of type arguments, such as `map[str]`.""",
        r'''
        env Demo {
          fn double(x: int) -> int = x * 2
          state {
            count: int = 0
          }
          query doubled() -> int {
            """Return twice the counter."""
            return double(count, 2)
          }
        }
        ''',
        r'''
        env Demo {
          fn double(x: int) -> int = x * 2
          state {
            count: int = 0
          }
          query doubled() -> int {
            """Return twice the counter."""
            return double(count)
          }
        }
        ''',
    ),
    "E2005": _explain(
        """A call leaves out a parameter that has no default, or a constructor leaves out a
        field that has no default and is not optional. Every row must be complete when it is
        inserted, so the missing value is an error, not an implicit `none`.""",
        r'''
        env Demo {
          entity User {
            key user_id: str
            name: str
          }
          state {
            users: table User
          }
          action add_user(user_id: str, name: str) -> User {
            """Create a user."""
            return users.insert(User(user_id=user_id))
          }
        }
        ''',
        r'''
        env Demo {
          entity User {
            key user_id: str
            name: str
          }
          state {
            users: table User
          }
          action add_user(user_id: str, name: str) -> User {
            """Create a user."""
            return users.insert(User(user_id=user_id, name=name))
          }
        }
        ''',
    ),
    "E2006": _explain(
        """`let x = e else "msg"` unwraps an optional value and fails the tool when it is
        `none`. Here `e` can never be `none`, so the `else` is dead; often the intent was
        `t.get(k)` (optional) instead of `t[k]` (which already fails when the key is
        absent). An optional that a test already proved not none is only a warning (W5009).""",
        r'''
        env Demo {
          entity User {
            key user_id: str
          }
          state {
            users: table User
          }
          query get_user(user_id: str) -> User {
            """Return one user."""
            let u = users[user_id] else "user not found"
            return u
          }
        }
        ''',
        r'''
        env Demo {
          entity User {
            key user_id: str
          }
          state {
            users: table User
          }
          query get_user(user_id: str) -> User {
            """Return one user."""
            let u = users.get(user_id) else "user not found"
            return u
          }
        }
        ''',
    ),
    "E2007": _explain(
        """`ref E` holds the key of a row of entity `E`, so `E` must be an entity. Enums and
        records are values without identity: store them directly (`status: Status`) instead
        of referring to them.""",
        r"""
        env Demo {
          record Address { city: str }
          entity User {
            key user_id: str
            address: ref Address
          }
          state {
            users: table User
          }
        }
        """,
        r"""
        env Demo {
          record Address { city: str }
          entity User {
            key user_id: str
            address: Address
          }
          state {
            users: table User
          }
        }
        """,
    ),
    "E2008": _explain(
        """`table E` in the `state` block holds the rows of entity `E`: rows need a key, so
        `E` must be an entity. A collection of records is a `list[R]`; or make `R` an entity
        with a `key` field. Conversely, every entity needs its table in `state`, so an entity
        without one is reported as well.""",
        r"""
        env Demo {
          record Point { x: int, y: int }
          state {
            points: table Point
          }
        }
        """,
        r"""
        env Demo {
          record Point { x: int, y: int }
          state {
            points: list[Point] = []
          }
        }
        """,
    ),
    "E2009": _explain(
        """An entity has exactly one `key` field: it identifies the row in its table, is what
        a `ref` stores and what `t.get(k)` looks up. A record is a plain value and has no key.
        Composite uniqueness is declared with `unique(a, b)`, not with a second key.""",
        r"""
        env Demo {
          entity User {
            user_id: str
            name: str
          }
          state {
            users: table User
          }
        }
        """,
        r"""
        env Demo {
          entity User {
            key user_id: str
            name: str
          }
          state {
            users: table User
          }
        }
        """,
    ),
    "E2010": _explain(
        """A `transitions { a -> b, ... }` clause lists the allowed changes of a field between
        enum members, so the field must have an enum type. A status kept as a string cannot
        be checked; declare an enum for it.""",
        r"""
        env Demo {
          entity Ticket {
            key ticket_id: str
            status: str = "open" transitions { open -> closed }
          }
          state {
            tickets: table Ticket
          }
        }
        """,
        r"""
        env Demo {
          enum TicketState { open, closed }
          entity Ticket {
            key ticket_id: str
            status: TicketState = TicketState.open transitions { open -> closed }
          }
          state {
            tickets: table Ticket
          }
        }
        """,
    ),
    "E2011": _explain(
        """Entities live only in tables. A field, parameter or collection that should point at
        a row stores its key with `ref E`; copying a whole row into another row would
        duplicate it and let the two copies drift apart.""",
        r"""
        env Demo {
          entity User {
            key user_id: str
          }
          entity Order {
            key order_id: str
            owner: User
          }
          state {
            users: table User
            orders: table Order
          }
        }
        """,
        r"""
        env Demo {
          entity User {
            key user_id: str
          }
          entity Order {
            key order_id: str
            owner: ref User
          }
          state {
            users: table User
            orders: table Order
          }
        }
        """,
    ),
    "E2012": _explain(
        """A `for` loop or a comprehension runs over a collection: a list, set, map (its
        keys), table (its rows) or string. An `int` is not a collection; use `range(n)` to
        count.""",
        r'''
        env Demo {
          state {
            names: list[str] = []
          }
          action add_guests(n: int) -> int {
            """Add n numbered guests."""
            for i in n {
              names.append(f"guest {i}")
            }
            return len(names)
          }
        }
        ''',
        r'''
        env Demo {
          state {
            names: list[str] = []
          }
          action add_guests(n: int) -> int {
            """Add n numbered guests."""
            for i in range(n) {
              names.append(f"guest {i}")
            }
            return len(names)
          }
        }
        ''',
    ),
    "E2013": _explain(
        """`x[i]` works on lists and strings (by position), maps (by key) and tables (by row
        key). Records and entities are not dictionaries: read their fields with `.field`.""",
        r'''
        env Demo {
          record Window { start: int, end: int }
          state {
            window: Window = Window(start=9, end=17)
          }
          query opening_hour() -> int {
            """Return the hour the shop opens."""
            return window["start"]
          }
        }
        ''',
        r'''
        env Demo {
          record Window { start: int, end: int }
          state {
            window: Window = Window(start=9, end=17)
          }
          query opening_hour() -> int {
            """Return the hour the shop opens."""
            return window.start
          }
        }
        ''',
    ),
    "E2014": _explain(
        """A literal must be a valid value of its type: `date("...")` takes an ISO date that
        exists, `datetime("...")` an ISO 8601 timestamp such as `2024-05-01T09:00:00Z`. Invalid
        literals are rejected at compile time so that every initial state can be loaded.""",
        r'''
        env Demo {
          state {
            opening: date = date("2024-02-30")
          }
          query get_opening() -> date {
            """Return the opening day."""
            return opening
          }
        }
        ''',
        r'''
        env Demo {
          state {
            opening: date = date("2024-02-29")
          }
          query get_opening() -> date {
            """Return the opening day."""
            return opening
          }
        }
        ''',
    ),
    "E2015": _explain(
        """`lambda` is allowed only as the `key=` argument of `sorted`, `min` and `max`. There
        are no first-class functions elsewhere: write a comprehension instead of `filter` or
        `map` with a lambda, and a `fn` for a reusable helper.""",
        r'''
        env Demo {
          state {
            scores: list[int] = []
          }
          query top_scores() -> list[int] {
            """Return the scores above 90."""
            let high = lambda s: s > 90
            return [s for s in scores if high(s)]
          }
        }
        ''',
        r'''
        env Demo {
          state {
            scores: list[int] = []
          }
          query top_scores() -> list[int] {
            """Return the scores above 90."""
            return [s for s in scores if s > 90]
          }
        }
        ''',
    ),
    "E2016": _explain(
        """`auto("PREFIX")` makes deterministic ids (`PREFIX-0001`, `PREFIX-0002`, ...) and is
        allowed only as the default of an entity's `str` key field. Anywhere else there is no
        table counter to draw from.""",
        r"""
        env Demo {
          entity Order {
            key order_id: int = auto("O")
          }
          state {
            orders: table Order
          }
        }
        """,
        r"""
        env Demo {
          entity Order {
            key order_id: str = auto("O")
          }
          state {
            orders: table Order
          }
        }
        """,
    ),
    "E2017": _explain(
        """A value of an optional type `T?` (a `t.get(k)` result, an optional field) is used
        where a `T` is required. It may be `none` at run time, so unwrap it first with
        `let x = e else "msg"`, or test `x != none` so that flow narrowing makes it a `T`.""",
        r'''
        env Demo {
          entity User {
            key user_id: str
            name: str
          }
          state {
            users: table User
          }
          query get_name(user_id: str) -> str {
            """Return a user's name."""
            return users.get(user_id).name
          }
        }
        ''',
        r'''
        env Demo {
          entity User {
            key user_id: str
            name: str
          }
          state {
            users: table User
          }
          query get_name(user_id: str) -> str {
            """Return a user's name."""
            let u = users.get(user_id) else "user not found"
            return u.name
          }
        }
        ''',
    ),
    # ---- E3xx: tools and effects -----------------------------------------------------------
    "E3001": _explain(
        """A `query` tool only reads state; an `action` may change it. The agent, the effect
        analysis and the invariant checks rely on this split, so a query that writes is an
        error: make it an `action`, or remove the write. A local bound to a list, set, map or
        record read from state is that value, not a copy (`let l = first(o.lines) else ...`,
        a `for` variable, a fn's result), so writing through it writes the state too.""",
        r'''
        env Demo {
          state {
            views: int = 0
          }
          query get_views() -> int {
            """Return the view counter."""
            views += 1
            return views
          }
        }
        ''',
        r'''
        env Demo {
          state {
            views: int = 0
          }
          action get_views() -> int {
            """Count one more view and return the view counter."""
            views += 1
            return views
          }
        }
        ''',
    ),
    "E3002": _explain(
        """Functions (`fn`), checks, invariants, defaults and constants are pure: they may read
        state but never write it, so they can be evaluated any number of times and in any
        order. Put shared effects into an `internal action`, which tools can call.""",
        r'''
        env Demo {
          state {
            counter: int = 0
          }
          fn next_number() -> int {
            counter += 1
            return counter
          }
          action take_ticket() -> int {
            """Draw the next ticket number."""
            return next_number()
          }
        }
        ''',
        r'''
        env Demo {
          state {
            counter: int = 0
          }
          internal action next_number() -> int {
            counter += 1
            return counter
          }
          action take_ticket() -> int {
            """Draw the next ticket number."""
            return next_number()
          }
        }
        ''',
    ),
    "E3003": _explain(
        """The key of a row is its identity: refs from other rows store it and the table is
        indexed by it. Changing it in place would leave dangling refs, so it is an error.
        Insert a row under the new key and delete the old one instead, or change another
        field.""",
        r'''
        env Demo {
          entity User {
            key user_id: str
            name: str
          }
          state {
            users: table User
          }
          action rename(user_id: str, new_id: str) {
            """Give a user a new id."""
            let u = users.get(user_id) else "user not found"
            u.user_id = new_id
          }
        }
        ''',
        r'''
        env Demo {
          entity User {
            key user_id: str
            name: str
          }
          state {
            users: table User
          }
          action rename(user_id: str, new_id: str) {
            """Give a user a new id."""
            let u = users.get(user_id) else "user not found"
            users.insert(User(user_id=new_id, name=u.name))
            users.delete(user_id)
          }
        }
        ''',
    ),
    "E3004": _explain(
        """A tool or fn with a return type must end every path with `return` (or `fail`).
        Falling off the end would hand the agent no result; add the missing `return`, or
        `fail "why"` when that path is an error.""",
        r'''
        env Demo {
          state {
            count: int = 0
          }
          query sign() -> str {
            """Say whether the counter is positive."""
            if count > 0 {
              return "positive"
            }
          }
        }
        ''',
        r'''
        env Demo {
          state {
            count: int = 0
          }
          query sign() -> str {
            """Say whether the counter is positive."""
            if count > 0 {
              return "positive"
            }
            return "not positive"
          }
        }
        ''',
    ),
    "E3005": _explain(
        """A statement after `return`, `fail`, `break` or `continue` in the same block can
        never run. It is usually a sign that the statements are in the wrong order, so it is
        reported rather than silently dropped.""",
        r'''
        env Demo {
          state {
            count: int = 0
          }
          action increment() -> int {
            """Add one to the counter."""
            return count
            count += 1
          }
        }
        ''',
        r'''
        env Demo {
          state {
            count: int = 0
          }
          action increment() -> int {
            """Add one to the counter."""
            count += 1
            return count
          }
        }
        ''',
    ),
    "E3006": _explain(
        """Constants, tables as a whole and `initial` (the state before the task) cannot be
        assigned. A table changes only through `insert` and `delete`, so every row passes the
        key, ref and invariant checks; a constant is the same for every call.""",
        r'''
        env Demo {
          entity User {
            key user_id: str
          }
          state {
            users: table User
          }
          action clear_users() {
            """Delete every user."""
            users = []
          }
        }
        ''',
        r'''
        env Demo {
          entity User {
            key user_id: str
          }
          state {
            users: table User
          }
          action clear_users() {
            """Delete every user."""
            for u in users {
              users.delete(u.user_id)
            }
          }
        }
        ''',
    ),
    "E3007": _explain(
        """A tool may call `fn`s and `internal` tools, but not another public tool. A public
        tool is one call of the agent, with its own transaction and trace entry; to share
        the logic, move it into an `internal action` and call that from both tools.""",
        r'''
        env Demo {
          state {
            count: int = 0
          }
          action reset() {
            """Set the counter to zero."""
            count = 0
          }
          action restart() {
            """Start counting again."""
            reset()
          }
        }
        ''',
        r'''
        env Demo {
          state {
            count: int = 0
          }
          internal action reset() {
            count = 0
          }
          action restart() {
            """Start counting again."""
            reset()
          }
        }
        ''',
    ),
    "E3008": _explain(
        """There is no recursion: a fn or internal tool may not call itself, directly or
        through others. Together with the absence of `while` this guarantees that every tool
        call terminates; write the computation as a `for` loop over a bounded collection or
        `range(n)`.""",
        r'''
        env Demo {
          fn factorial(n: int) -> int = 1 if n <= 1 else n * factorial(n - 1)
          query factorial_of(n: int) -> int {
            """Return n factorial."""
            return factorial(n)
          }
        }
        ''',
        r'''
        env Demo {
          fn factorial(n: int) -> int {
            let result = 1
            for i in range(n) {
              result = result * (i + 1)
            }
            return result
          }
          query factorial_of(n: int) -> int {
            """Return n factorial."""
            return factorial(n)
          }
        }
        ''',
    ),
    "E3009": _explain(
        """A field declared `immutable` is set when its row is inserted and never changes
        afterwards: a creation time, who filed a record, the amount of a signed contract.
        The compiler rejects every assignment to it, and every in-place change
        (`row.tags.append(...)`) too, so no tool can ever alter it.""",
        r'''
        env Demo {
          entity Note {
            key note_id: str
            created_at: datetime immutable
          }
          state {
            notes: table Note
            now: datetime
          }
          action touch(note_id: str) -> Note {
            """Mark a note as touched now."""
            let n = notes.get(note_id) else "no such note"
            n.created_at = now
            return n
          }
        }
        ''',
        r'''
        env Demo {
          entity Note {
            key note_id: str
            created_at: datetime immutable
            touched_at: datetime? = none
          }
          state {
            notes: table Note
            now: datetime
          }
          action touch(note_id: str) -> Note {
            """Mark a note as touched now."""
            let n = notes.get(note_id) else "no such note"
            n.touched_at = now
            return n
          }
        }
        ''',
    ),
    # ---- E4xx: invariants and tasks --------------------------------------------------------
    "E3010": _explain(
        """A constant, and the default of a field, parameter or state field, is computed once,
        before any environment exists; fns and tools run on an environment (a fn may read its
        state), so they cannot be called there. Write the value itself, or compute it where it
        is used, in the tool.""",
        r'''
        env Demo {
          fn cents(euros: int) -> int = euros * 100
          const FEE: int = cents(5)
          state {
            balance: int = 0
          }
          action charge() -> int {
            """Charge the fee."""
            balance -= FEE
            return balance
          }
        }
        ''',
        r'''
        env Demo {
          const FEE: int = 500
          state {
            balance: int = 0
          }
          action charge() -> int {
            """Charge the fee."""
            balance -= FEE
            return balance
          }
        }
        ''',
    ),
    "E4001": _explain(
        """A task's inline `init` must give a value to every scalar state field that has no
        default (tables start empty when left out). Without it the task would start in an
        undefined state, for instance with no `now`.""",
        r'''
        env Demo {
          state {
            now: datetime
            count: int = 0
          }
          action add(n: int) {
            """Add n to the counter."""
            count += n
          }
          task add_one {
            """Add one to the counter."""
            init { count = 1 }
            solution { add(n=1) }
            check "the counter is two": count == 2
          }
        }
        ''',
        r'''
        env Demo {
          state {
            now: datetime
            count: int = 0
          }
          action add(n: int) {
            """Add n to the counter."""
            count += n
          }
          task add_one {
            """Add one to the counter."""
            init {
              now = datetime("2024-05-22T08:00:00Z")
              count = 1
            }
            solution { add(n=1) }
            check "the counter is two": count == 2
          }
        }
        ''',
    ),
    "E4002": _explain(
        """`init from "file.json"` reads the task's initial state from a JSON file, relative
        to the spec, at compile time. The file must exist, be readable UTF-8 and hold a JSON
        object with one key per state field; otherwise the task cannot be loaded.""",
        r'''
        env Demo {
          state {
            count: int = 0
          }
          action add(n: int) {
            """Add n to the counter."""
            count += n
          }
          task add_five {
            """Add five to the counter."""
            init from "no_such_file.json"
            solution { add(n=5) }
            check "the counter is five": count == 5
          }
        }
        ''',
        r'''
        env Demo {
          state {
            count: int = 0
          }
          action add(n: int) {
            """Add n to the counter."""
            count += n
          }
          task add_five {
            """Add five to the counter."""
            init { count = 0 }
            solution { add(n=5) }
            check "the counter is five": count == 5
          }
        }
        ''',
    ),
    "E4020": _explain(
        """`init from` names a JSON file relative to the spec and inside the spec's directory:
        an absolute path, a `..` that climbs out or a symlink that points out is refused.
        Specs are often written by LLMs, and the file's content ends up in the compiled module
        and in the state the agent sees, so a spec must not pull in any file of the machine.""",
        r'''
        env Demo {
          state {
            count: int = 0
          }
          action add(n: int) {
            """Add n to the counter."""
            count += n
          }
          task add_five {
            """Add five to the counter."""
            init from "/etc/hostname"
            solution { add(n=5) }
            check "the counter is five": count == 5
          }
        }
        ''',
        r'''
        env Demo {
          state {
            count: int = 0
          }
          action add(n: int) {
            """Add n to the counter."""
            count += n
          }
          task add_five {
            """Add five to the counter."""
            init { count = 0 }
            solution { add(n=5) }
            check "the counter is five": count == 5
          }
        }
        ''',
    ),
    "E4021": _explain(
        """An init file must be a regular file of at most 5,000,000 bytes. A directory, a
        device such as `/dev/zero` or a pipe has no end or blocks the checker; a larger state
        belongs in a data loader, not in a compiled module.""",
        r'''
        env Demo {
          state {
            count: int = 0
          }
          action add(n: int) {
            """Add n to the counter."""
            count += n
          }
          task add_five {
            """Add five to the counter."""
            init from "."
            solution { add(n=5) }
            check "the counter is five": count == 5
          }
        }
        ''',
        r'''
        env Demo {
          state {
            count: int = 0
          }
          action add(n: int) {
            """Add n to the counter."""
            count += n
          }
          task add_five {
            """Add five to the counter."""
            init { count = 0 }
            solution { add(n=5) }
            check "the counter is five": count == 5
          }
        }
        ''',
    ),
    "E4022": _explain(
        """A default (of a parameter, a field or a state field) and a `const` are computed
        outside any tool call: when the tool schemas are built, a record is made, a state is
        reset or the module is imported. There is no environment to call a `fn` on and no step
        budget, so each is a constant expression: no comprehension and no
        `range`.""",
        r'''
        env Demo {
          query page(size: int = len([n for n in [10, 20]])) -> int {
            """The page size."""
            return size
          }
        }
        ''',
        r'''
        env Demo {
          query page(size: int = 20) -> int {
            """The page size."""
            return size
          }
        }
        ''',
    ),
    "E4023": _explain(
        """The checker computes every parameter default of a public tool once. A default that
        fails (a division by zero, an index out of range, `int("x")`) would fail every call
        that leaves the argument out, and would break the tool schemas.""",
        r'''
        env Demo {
          query page(size: int = 100 // 0) -> int {
            """The page size."""
            return size
          }
        }
        ''',
        r'''
        env Demo {
          query page(size: int = 100) -> int {
            """The page size."""
            return size
          }
        }
        ''',
    ),
    "E4003": _explain(
        """A task's initial state must satisfy the same rules as every state the tools can
        reach: row keys are distinct, `unique` fields do not clash, every `ref` points at an
        existing row, invariants hold and values have their declared types. `check` loads each
        task and reports the first broken rule at the `init` assignment that holds it (or the
        `init` block, or the `init from` path). EnvScaler's released tasks include initial
        states with dangling references: an agent trained on them learns from a world that
        its own tools could never produce.""",
        r'''
        env Demo {
          entity User { key user_id: str }
          entity Order { key order_id: str, user: ref User }
          state {
            users: table User
            orders: table Order
          }
          action cancel(order_id: str) {
            """Cancel an order."""
            orders.delete(order_id)
          }
          task cancel_order {
            """Cancel order O1."""
            init {
              users = [User(user_id="U1")]
              orders = [Order(order_id="O1", user="U2")]
            }
            solution { cancel(order_id="O1") }
            check "order O1 is gone": "O1" not in orders
          }
        }
        ''',
        r'''
        env Demo {
          entity User { key user_id: str }
          entity Order { key order_id: str, user: ref User }
          state {
            users: table User
            orders: table Order
          }
          action cancel(order_id: str) {
            """Cancel an order."""
            orders.delete(order_id)
          }
          task cancel_order {
            """Cancel order O1."""
            init {
              users = [User(user_id="U1")]
              orders = [Order(order_id="O1", user="U1")]
            }
            solution { cancel(order_id="O1") }
            check "order O1 is gone": "O1" not in orders
          }
        }
        ''',
    ),
    "E4004": _explain(
        """`check` replays a task's `solution` on its initial state, exactly as an agent's
        calls would run, and every call must succeed. A failing step usually means a typo in
        an id, steps in the wrong order (a `require` that an earlier step should have made
        true), or an init that lacks a row the solution needs. EnvScaler's released gold
        solutions sometimes break their own environment's rules; such a task cannot be
        solved and tells the agent nothing.""",
        r'''
        env Demo {
          entity Item { key sku: str, stock: int }
          state {
            items: table Item
          }
          action restock(sku: str, qty: int) {
            """Add qty units to an item's stock."""
            let item = items.get(sku) else f"no item {sku}"
            item.stock += qty
          }
          task restock_apples {
            """Add 5 apples to the stock."""
            init { items = [Item(sku="APPLE", stock=2)] }
            solution { restock(sku="APPEL", qty=5) }
            check "there are 7 apples": items["APPLE"].stock == 7
          }
        }
        ''',
        r'''
        env Demo {
          entity Item { key sku: str, stock: int }
          state {
            items: table Item
          }
          action restock(sku: str, qty: int) {
            """Add qty units to an item's stock."""
            let item = items.get(sku) else f"no item {sku}"
            item.stock += qty
          }
          task restock_apples {
            """Add 5 apples to the stock."""
            init { items = [Item(sku="APPLE", stock=2)] }
            solution { restock(sku="APPLE", qty=5) }
            check "there are 7 apples": items["APPLE"].stock == 7
          }
        }
        ''',
    ),
    "E4005": _explain(
        """Every check of a task must pass once its reference solution has run: the solution
        is the proof that the task can be done. A check that fails afterwards usually has a
        wrong constant (an off-by-one count or total), a wrong enum member or a guessed `auto`
        key, or the solution misses a step. An agent would be graded against a goal that even
        the reference solution does not reach.""",
        r'''
        env Demo {
          entity Item { key sku: str, stock: int }
          state {
            items: table Item
          }
          action restock(sku: str, qty: int) {
            """Add qty units to an item's stock."""
            let item = items.get(sku) else f"no item {sku}"
            item.stock += qty
          }
          task restock_apples {
            """Add 5 apples to the stock."""
            init { items = [Item(sku="APPLE", stock=2)] }
            solution { restock(sku="APPLE", qty=5) }
            check "there are 7 apples": items["APPLE"].stock == 8
          }
        }
        ''',
        r'''
        env Demo {
          entity Item { key sku: str, stock: int }
          state {
            items: table Item
          }
          action restock(sku: str, qty: int) {
            """Add qty units to an item's stock."""
            let item = items.get(sku) else f"no item {sku}"
            item.stock += qty
          }
          task restock_apples {
            """Add 5 apples to the stock."""
            init { items = [Item(sku="APPLE", stock=2)] }
            solution { restock(sku="APPLE", qty=5) }
            check "there are 7 apples": items["APPLE"].stock == 7
          }
        }
        ''',
    ),
    "E4006": _explain(
        """A task's reference solution must change the state. A solution made only of queries,
        or of writes that store values the initial state already has, shows a task that asks
        for no change: usually the action is missing from the solution, or the init already
        holds the goal. Every check on the state then passes for an agent that does
        nothing.""",
        r'''
        env Demo {
          state {
            count: int = 0
          }
          query get_count() -> int {
            """Return the counter."""
            return count
          }
          action add(n: int) {
            """Add n to the counter."""
            count += n
          }
          task add_five {
            """Add five to the counter."""
            init { count = 0 }
            solution { get_count() }
            check "the counter is five": count == 5
          }
        }
        ''',
        r'''
        env Demo {
          state {
            count: int = 0
          }
          query get_count() -> int {
            """Return the counter."""
            return count
          }
          action add(n: int) {
            """Add n to the counter."""
            count += n
          }
          task add_five {
            """Add five to the counter."""
            init { count = 0 }
            solution { add(n=5) }
            check "the counter is five": count == 5
          }
        }
        ''',
    ),
    "E4007": _explain(
        """A check grades the agent's run, so it may read only what that run leaves: the final
        state, `initial.`, the call trace and the agent's `answer`. A `let` binding of the solution
        holds what the reference run got, such as the auto key of the row it created; an agent whose
        run differs (another order, one more row first) gets another key, and a check pinned to the
        reference one fails a correct agent or passes a wrong one. Find the row by its content with
        `any(...)`, `count(...)` or `first(...)`.""",
        r'''
        env Demo {
          entity Loan { key loan_id: str = auto("L"), book: str, days: int }
          state {
            loans: table Loan
          }
          action borrow(book: str, days: int) -> Loan {
            """Borrow a book."""
            return loans.insert(Loan(book=book, days=days))
          }
          task borrow_dune {
            """Borrow Dune (B1) for 7 days."""
            init { loans = [] }
            solution { let loan = borrow(book="B1", days=7) }
            check "Dune is lent for 7 days": loans[loan.loan_id].days == 7
          }
        }
        ''',
        r'''
        env Demo {
          entity Loan { key loan_id: str = auto("L"), book: str, days: int }
          state {
            loans: table Loan
          }
          action borrow(book: str, days: int) -> Loan {
            """Borrow a book."""
            return loans.insert(Loan(book=book, days=days))
          }
          task borrow_dune {
            """Borrow Dune (B1) for 7 days."""
            init { loans = [] }
            solution { borrow(book="B1", days=7) }
            check "Dune is lent for 7 days": any(l.book == "B1" and l.days == 7 for l in loans)
          }
        }
        ''',
    ),
    "E4008": _explain(
        """Verification grades the empty trajectory, an agent that makes no call and says nothing,
        with the task's checks. When every check already passes, that agent gets the full reward:
        the checks say what must stay as it was but not what the task asks to change. Add a check on
        the change itself.""",
        r'''
        env Demo {
          entity Ticket { key ticket_id: str, closed: bool = false }
          state {
            tickets: table Ticket
          }
          action close(ticket_id: str) {
            """Close a ticket."""
            let t = tickets.get(ticket_id) else "no such ticket"
            t.closed = true
          }
          task close_t1 {
            """Close ticket T1."""
            init { tickets = [Ticket(ticket_id="T1")] }
            solution { close(ticket_id="T1") }
            check "no ticket was deleted": len(tickets) == len(initial.tickets)
          }
        }
        ''',
        r'''
        env Demo {
          entity Ticket { key ticket_id: str, closed: bool = false }
          state {
            tickets: table Ticket
          }
          action close(ticket_id: str) {
            """Close a ticket."""
            let t = tickets.get(ticket_id) else "no such ticket"
            t.closed = true
          }
          task close_t1 {
            """Close ticket T1."""
            init { tickets = [Ticket(ticket_id="T1")] }
            solution { close(ticket_id="T1") }
            check "T1 is closed": tickets["T1"].closed
            check "no ticket was deleted": len(tickets) == len(initial.tickets)
          }
        }
        ''',
    ),
    "E4009": _explain(
        """Verification replays only the solution's read-only (query) calls, without its actions.
        When the checks all pass after that, an agent that looks things up and changes nothing gets
        the full reward: typically the checks only ask that a query was `called`. Check the state
        the actions change; a question task, which checks the agent's `answer`, is exempt.""",
        r'''
        env Demo {
          entity Ticket { key ticket_id: str, closed: bool = false }
          state { tickets: table Ticket }
          query get_ticket(ticket_id: str) -> Ticket? {
            """One ticket, or none."""
            return tickets.get(ticket_id)
          }
          action close(ticket_id: str) {
            """Close a ticket."""
            let t = tickets.get(ticket_id) else "no such ticket"
            t.closed = true
          }
          task close_t1 {
            """Look ticket T1 up, then close it."""
            init { tickets = [Ticket(ticket_id="T1")] }
            solution {
              get_ticket(ticket_id="T1")
              close(ticket_id="T1")
            }
            check "T1 was looked up": called("get_ticket", ticket_id="T1")
          }
        }
        ''',
        r'''
        env Demo {
          entity Ticket { key ticket_id: str, closed: bool = false }
          state { tickets: table Ticket }
          query get_ticket(ticket_id: str) -> Ticket? {
            """One ticket, or none."""
            return tickets.get(ticket_id)
          }
          action close(ticket_id: str) {
            """Close a ticket."""
            let t = tickets.get(ticket_id) else "no such ticket"
            t.closed = true
          }
          task close_t1 {
            """Look ticket T1 up, then close it."""
            init { tickets = [Ticket(ticket_id="T1")] }
            solution {
              get_ticket(ticket_id="T1")
              close(ticket_id="T1")
            }
            check "T1 is closed": tickets["T1"].closed
          }
        }
        ''',
    ),
    "E4010": _explain(
        """A check that reads `answer` grades what the agent tells the user. To verify such a check,
        the solution must state what a correct agent answers, with a last step `answer "..."`;
        without it there is nothing to run the check on. Add the reference answer to the solution.""",
        r'''
        env Demo {
          entity Account { key account_id: str, balance: float }
          state {
            accounts: table Account
          }
          query get_balance(account_id: str) -> float {
            """The balance of an account."""
            let a = accounts.get(account_id) else "no such account"
            return a.balance
          }
          task tell_balance {
            """Tell the user the balance of account A1."""
            init { accounts = [Account(account_id="A1", balance=153.27)] }
            solution { get_balance(account_id="A1") }
            check "tells the balance": "153.27" in answer
          }
        }
        ''',
        r'''
        env Demo {
          entity Account { key account_id: str, balance: float }
          state {
            accounts: table Account
          }
          query get_balance(account_id: str) -> float {
            """The balance of an account."""
            let a = accounts.get(account_id) else "no such account"
            return a.balance
          }
          task tell_balance {
            """Tell the user the balance of account A1."""
            init { accounts = [Account(account_id="A1", balance=153.27)] }
            solution {
              get_balance(account_id="A1")
              answer "The balance of A1 is 153.27."
            }
            check "tells the balance": "153.27" in answer
          }
        }
        ''',
    ),
    # ---- W5xx: lints -----------------------------------------------------------------------
    "W5001": _explain(
        """Public tools and tasks need a docstring: a tool's docstring is the description the
        agent sees in its tool schema, and a task's docstring is the instruction given to the
        agent. Without one the agent has to guess what the tool does.""",
        r"""
        env Demo {
          state {
            count: int = 0
          }
          query get_count() -> int {
            return count
          }
        }
        """,
        r'''
        env Demo {
          state {
            count: int = 0
          }
          query get_count() -> int {
            """Return the current value of the counter."""
            return count
          }
        }
        ''',
    ),
    "W5002": _explain(
        """A `query` whose name starts like an action (`update_`, `set_`, `delete_`, `add_`,
        `create_`, ...) promises a change it cannot make, since queries do not write. Either
        the tool should be an `action`, or it should get a name that says it reads.""",
        r'''
        env Demo {
          state {
            count: int = 0
          }
          query update_count() -> int {
            """Return the counter."""
            return count
          }
        }
        ''',
        r'''
        env Demo {
          state {
            count: int = 0
          }
          query get_count() -> int {
            """Return the counter."""
            return count
          }
        }
        ''',
    ),
    "W5003": _explain(
        """`json` is an escape hatch for data without a schema. Nothing inside it is
        type-checked or validated, and the agent gets no schema for it; prefer a `record`
        (or a `map[K, V]`) that says what the data holds.""",
        r"""
        env Demo {
          entity Product {
            key sku: str
            details: json
          }
          state {
            products: table Product
          }
        }
        """,
        r"""
        env Demo {
          record Details { color: str, weight_kg: float }
          entity Product {
            key sku: str
            details: Details
          }
          state {
            products: table Product
          }
        }
        """,
    ),
    "W5004": _explain(
        """An enum, record, entity, fn or constant that nothing uses is dead weight in the
        spec and in the generated code, and often a sign of a field or tool that was
        forgotten. Use it or remove it.""",
        r'''
        env Demo {
          enum Color { red, green }
          state {
            count: int = 0
          }
          query get_count() -> int {
            """Return the counter."""
            return count
          }
        }
        ''',
        r'''
        env Demo {
          state {
            count: int = 0
          }
          query get_count() -> int {
            """Return the counter."""
            return count
          }
        }
        ''',
    ),
    "W5005": _explain(
        """A `let` variable that is never read usually means a computed value was forgotten
        (the wrong variable is returned, or a check was meant). Use it or remove the
        `let`.""",
        r'''
        env Demo {
          state {
            names: list[str] = []
          }
          query count_names() -> int {
            """Return how many names are stored."""
            let total = len(names)
            return len(names)
          }
        }
        ''',
        r'''
        env Demo {
          state {
            names: list[str] = []
          }
          query count_names() -> int {
            """Return how many names are stored."""
            let total = len(names)
            return total
          }
        }
        ''',
    ),
    "W5008": _explain(
        """A local that holds a new value (built by a literal, a record constructor, `list(...)`,
        `sorted(...)`, a comprehension, or a public tool's argument) lives nowhere in state, so
        a write through it changes nothing once the call ends, unless the local is read
        afterwards. It usually means the author expected a copy to change the state: write the
        state place itself, or bind the local to the value in state (`let tags = o.tags`,
        which is that list, not a copy).""",
        r'''
        env Demo {
          entity Order { key order_id: str, tags: list[str] = [] }
          state {
            orders: table Order
          }
          action tag_order(order_id: str, tag: str) {
            """Add a tag to an order."""
            let o = orders.get(order_id) else "no such order"
            let tags = list(o.tags)
            tags.append(tag)
          }
        }
        ''',
        r'''
        env Demo {
          entity Order { key order_id: str, tags: list[str] = [] }
          state {
            orders: table Order
          }
          action tag_order(order_id: str, tag: str) {
            """Add a tag to an order."""
            let o = orders.get(order_id) else "no such order"
            let tags = o.tags
            tags.append(tag)
          }
        }
        ''',
    ),
    "W5006": _explain(
        """A check that already passes on the task's initial state rewards an agent that does
        nothing, and inflates every score. EnvScaler's released tasks have about a third of
        their checks already true before the agent acts; a guard such as "the amount is
        unchanged" written with a constant is a common cause. Check what the task changes, or
        compare with
        `initial.` to say that something must stay as it was; checks that use `initial.`,
        `called(...)` or `calls(...)` are guards and are not reported.""",
        r'''
        env Demo {
          entity Invoice { key invoice_id: str, amount: float, paid: bool = false }
          state {
            invoices: table Invoice
          }
          action pay(invoice_id: str) {
            """Pay an invoice."""
            let i = invoices.get(invoice_id) else f"no invoice {invoice_id}"
            i.paid = true
          }
          task pay_invoice {
            """Pay invoice I1."""
            init { invoices = [Invoice(invoice_id="I1", amount=50.0)] }
            solution { pay(invoice_id="I1") }
            check "I1 is paid": invoices["I1"].paid
            check "the amount is unchanged": invoices["I1"].amount == 50.0
          }
        }
        ''',
        r'''
        env Demo {
          entity Invoice { key invoice_id: str, amount: float, paid: bool = false }
          state {
            invoices: table Invoice
          }
          action pay(invoice_id: str) {
            """Pay an invoice."""
            let i = invoices.get(invoice_id) else f"no invoice {invoice_id}"
            i.paid = true
          }
          task pay_invoice {
            """Pay invoice I1."""
            init { invoices = [Invoice(invoice_id="I1", amount=50.0)] }
            solution { pay(invoice_id="I1") }
            check "I1 is paid": invoices["I1"].paid
            check "the amount is unchanged": invoices["I1"].amount == initial.invoices["I1"].amount
          }
        }
        ''',
    ),
    "W5007": _explain(
        """A check that reads no state written by the tools its task's solution calls cannot
        depend on doing the task: its result is the same whatever the solution does. It is
        usually a check on the wrong table or field, or a guard on state that the task's tools
        never touch. Check the state the task is about, or guard what those tools could change
        by mistake; checks that use `called(...)` or `calls(...)` are not reported.""",
        r'''
        env Demo {
          entity Item { key sku: str, stock: int }
          state {
            items: table Item
            note: str = ""
          }
          action restock(sku: str, qty: int) {
            """Add qty units to an item's stock."""
            let item = items.get(sku) else f"no item {sku}"
            item.stock += qty
          }
          task restock_apples {
            """Add 5 apples to the stock."""
            init { items = [Item(sku="APPLE", stock=2), Item(sku="PEAR", stock=4)] }
            solution { restock(sku="APPLE", qty=5) }
            check "there are 7 apples": items["APPLE"].stock == 7
            check "the note is unchanged": note == initial.note
          }
        }
        ''',
        r'''
        env Demo {
          entity Item { key sku: str, stock: int }
          state {
            items: table Item
            note: str = ""
          }
          action restock(sku: str, qty: int) {
            """Add qty units to an item's stock."""
            let item = items.get(sku) else f"no item {sku}"
            item.stock += qty
          }
          task restock_apples {
            """Add 5 apples to the stock."""
            init { items = [Item(sku="APPLE", stock=2), Item(sku="PEAR", stock=4)] }
            solution { restock(sku="APPLE", qty=5) }
            check "there are 7 apples": items["APPLE"].stock == 7
            check "the pears are untouched": items["PEAR"].stock == initial.items["PEAR"].stock
          }
        }
        ''',
    ),
    "W5009": _explain(
        """`let x = v else "message"` unwraps an optional, but here `v` was already tested
        (`if v != none`, `require v != none`, ...), so it cannot be none and the `else` never
        runs. The spec is still correct, so this is a warning and not E2006; drop the `else`
        part, which the fix does.""",
        r'''
        env Demo {
          entity User { key user_id: str, nick: str? }
          state {
            users: table User
          }
          query nick(user_id: str) -> str {
            """The user's nickname, or '-'."""
            let u = users.get(user_id) else "user not found"
            if u.nick != none {
              let n = u.nick else "no nickname"
              return n
            }
            return "-"
          }
        }
        ''',
        r'''
        env Demo {
          entity User { key user_id: str, nick: str? }
          state {
            users: table User
          }
          query nick(user_id: str) -> str {
            """The user's nickname, or '-'."""
            let u = users.get(user_id) else "user not found"
            if u.nick != none {
              let n = u.nick
              return n
            }
            return "-"
          }
        }
        ''',
    ),
    "W5011": _explain(
        """Verification replays the solution once per state-changing step, with that step left out
        (later steps may then fail). When the task still succeeds, no check notices what the step
        does: an agent can skip it and get the full reward. Add a check on what the step changes,
        or drop the step if the task does not need it.""",
        r'''
        env Demo {
          entity Ticket { key ticket_id: str, closed: bool = false }
          state {
            tickets: table Ticket
          }
          action close(ticket_id: str) {
            """Close a ticket."""
            let t = tickets.get(ticket_id) else "no such ticket"
            t.closed = true
          }
          task close_both {
            """Close tickets T1 and T2."""
            init { tickets = [Ticket(ticket_id="T1"), Ticket(ticket_id="T2")] }
            solution {
              close(ticket_id="T1")
              close(ticket_id="T2")
            }
            check "T1 is closed": tickets["T1"].closed
          }
        }
        ''',
        r'''
        env Demo {
          entity Ticket { key ticket_id: str, closed: bool = false }
          state {
            tickets: table Ticket
          }
          action close(ticket_id: str) {
            """Close a ticket."""
            let t = tickets.get(ticket_id) else "no such ticket"
            t.closed = true
          }
          task close_both {
            """Close tickets T1 and T2."""
            init { tickets = [Ticket(ticket_id="T1"), Ticket(ticket_id="T2")] }
            solution {
              close(ticket_id="T1")
              close(ticket_id="T2")
            }
            check "both are closed": tickets["T1"].closed and tickets["T2"].closed
          }
        }
        ''',
    ),
    "W5012": _explain(
        """A solution step sets a table field to a value it passed, and no check of the task reads
        that field: an agent that passes another value (the wrong note, the wrong book) gets the full
        reward. Check the field, or compare the whole row with `initial.` where only some fields may
        change. Fields a tool derives itself, such as a timestamp, are not reported.""",
        r'''
        env Demo {
          entity Ticket { key ticket_id: str, closed: bool = false, note: str = "" }
          state {
            tickets: table Ticket
          }
          action close(ticket_id: str, note: str) {
            """Close a ticket with a note."""
            let t = tickets.get(ticket_id) else "no such ticket"
            t.closed = true
            t.note = note
          }
          task close_t1 {
            """Close ticket T1 with the note "fixed in 2.1"."""
            init { tickets = [Ticket(ticket_id="T1")] }
            solution { close(ticket_id="T1", note="fixed in 2.1") }
            check "T1 is closed": tickets["T1"].closed
          }
        }
        ''',
        r'''
        env Demo {
          entity Ticket { key ticket_id: str, closed: bool = false, note: str = "" }
          state {
            tickets: table Ticket
          }
          action close(ticket_id: str, note: str) {
            """Close a ticket with a note."""
            let t = tickets.get(ticket_id) else "no such ticket"
            t.closed = true
            t.note = note
          }
          task close_t1 {
            """Close ticket T1 with the note "fixed in 2.1"."""
            init { tickets = [Ticket(ticket_id="T1")] }
            solution { close(ticket_id="T1", note="fixed in 2.1") }
            check "T1 is closed with the note": tickets["T1"].closed and tickets["T1"].note == "fixed in 2.1"
          }
        }
        ''',
    ),
    "W5013": _explain(
        """A check held before the agent acted, after the solution, and after every partial run
        verification tried (the solution with one step left out, its queries alone). Whatever the
        agent does, the check gives the same result, so it cannot tell a good run from a bad one. Check
        what the task changes; to say that something must stay as it was, compare with `initial.`.""",
        r'''
        env Demo {
          entity Ticket { key ticket_id: str, closed: bool = false }
          state {
            tickets: table Ticket
          }
          action close(ticket_id: str) {
            """Close a ticket."""
            let t = tickets.get(ticket_id) else "no such ticket"
            t.closed = true
          }
          task close_both {
            """Close tickets T1 and T2."""
            init { tickets = [Ticket(ticket_id="T1"), Ticket(ticket_id="T2")] }
            solution {
              close(ticket_id="T1")
              close(ticket_id="T2")
            }
            check "both are closed": tickets["T1"].closed and tickets["T2"].closed
            check "no ticket is lost": len(tickets) <= 2
          }
        }
        ''',
        r'''
        env Demo {
          entity Ticket { key ticket_id: str, closed: bool = false }
          state {
            tickets: table Ticket
          }
          action close(ticket_id: str) {
            """Close a ticket."""
            let t = tickets.get(ticket_id) else "no such ticket"
            t.closed = true
          }
          task close_both {
            """Close tickets T1 and T2."""
            init { tickets = [Ticket(ticket_id="T1"), Ticket(ticket_id="T2")] }
            solution {
              close(ticket_id="T1")
              close(ticket_id="T2")
            }
            check "both are closed": tickets["T1"].closed and tickets["T2"].closed
            check "no ticket is lost": len(tickets) == len(initial.tickets)
          }
        }
        ''',
    ),
    "W5020": _explain(
        """A task file without a single task adds nothing to its env. It is usually a file
        whose tasks were moved or never written; add `task name { ... }` blocks or delete it.""",
        _task_file("counter.env", "\n          # add_three moved into counter.env"),
        _task_file("counter.env"),
        _COUNTER,
    ),
    # ---- E9xx: internal --------------------------------------------------------------------
    "E9001": _explain(
        """The compiler itself failed while checking the spec: this is a bug in envdsl, not a
        mistake in the spec. The note holds the Python traceback. Please report it together
        with the spec that triggers it; no spec is meant to trigger it, so there is no
        example.""",
        "",
        "",
    ),
}
