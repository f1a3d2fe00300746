"""The diagnostic code registry: every code the compiler can emit, in one place.

Codes are banded by stage (E0xx syntax, E1xx names, E2xx types, E3xx tools and effects,
E4xx invariants and tasks, W5xx lints, E9xx internal) and carry a stable kebab-case slug.
The long explanations with a wrong and a right example live in explanations/CODE.md; a test
keeps the two in step and checks that every code has a fixture.
"""

from __future__ import annotations

import enum

from envdsl.util.frozen_node import node


class Severity(enum.Enum):
    ERROR = "error"
    WARNING = "warning"


class Stage(enum.Enum):
    SYNTAX = "syntax"
    NAMES = "names"
    TYPES = "types"
    EFFECTS = "effects"
    TASKS = "tasks"
    LINTS = "lints"
    INTERNAL = "internal"


@node
class Code:
    code: str
    slug: str
    stage: Stage
    summary: str

    @property
    def severity(self) -> Severity:
        return Severity.WARNING if self.code.startswith("W") else Severity.ERROR


REGISTRY: dict[str, Code] = {}


def _register(code: str, slug: str, stage: Stage, summary: str) -> Code:
    entry = Code(code, slug, stage, summary)
    if code in REGISTRY or any(other.slug == slug for other in REGISTRY.values()):
        raise AssertionError(f"duplicate diagnostic code {code} or slug {slug}")
    REGISTRY[code] = entry
    return entry


def lookup(code_or_slug: str) -> Code | None:
    """Find a code by its code (`E2001`, case-insensitive) or its slug (`type-mismatch`)."""
    wanted = code_or_slug.strip()
    if wanted.upper() in REGISTRY:
        return REGISTRY[wanted.upper()]
    return next((entry for entry in REGISTRY.values() if entry.slug == wanted.lower()), None)


_S, _N, _T, _E, _K, _L = (
    Stage.SYNTAX,
    Stage.NAMES,
    Stage.TYPES,
    Stage.EFFECTS,
    Stage.TASKS,
    Stage.LINTS,
)

# ---- E0xx: syntax ----------------------------------------------------------------------------
SYNTAX_ERROR = _register("E0001", "syntax-error", _S, "the text does not follow the grammar")
INVALID_TOKEN = _register(
    "E0002", "invalid-token", _S, "a character or string that cannot start any token"
)
INVALID_ESCAPE = _register("E0003", "invalid-escape", _S, "an unknown escape sequence in a string")
ONE_ENV_PER_FILE = _register(
    "E0004", "one-env-per-file", _S, "a spec file must hold exactly one env"
)
INVALID_ASSIGNMENT_TARGET = _register(
    "E0005",
    "invalid-assignment-target",
    _S,
    "only variables, fields and map entries can be assigned",
)
INVALID_SOLUTION_STEP = _register(
    "E0006", "invalid-solution-step", _S, "a solution step must be a tool call with named arguments"
)
LOOP_CONTROL_OUTSIDE_LOOP = _register(
    "E0007", "loop-control-outside-loop", _S, "`break` or `continue` outside a `for` loop"
)
INVALID_FSTRING = _register(
    "E0008", "invalid-fstring", _S, "an f-string with an unbalanced or empty `{}` hole"
)
DUPLICATE_TASK_SECTION = _register(
    "E0009", "duplicate-task-section", _S, "a task with two `init` or two `solution` sections"
)
INPUT_TOO_LARGE = _register(
    "E0020", "input-too-large", _S, "a file or a line longer than the documented limits"
)
NESTING_TOO_DEEP = _register(
    "E0021", "nesting-too-deep", _S, "brackets, blocks or an expression nested past the limits"
)
NUMBER_TOO_LONG = _register(
    "E0022", "number-too-long", _S, "an integer literal with more digits than the limit"
)
ONE_TASKS_BLOCK = _register(
    "E0030", "one-tasks-block", _S, "a task file must hold exactly one `tasks for` block"
)

# ---- E1xx: names -----------------------------------------------------------------------------
UNKNOWN_NAME = _register(
    "E1001",
    "unknown-name",
    _N,
    "a name that is not a local, parameter, state field, constant or enum",
)
UNKNOWN_TYPE = _register(
    "E1002", "unknown-type", _N, "a type name that is neither builtin nor declared"
)
UNKNOWN_FIELD = _register(
    "E1003", "unknown-field", _N, "a field that the record or entity does not declare"
)
UNKNOWN_ENUM_MEMBER = _register(
    "E1004", "unknown-enum-member", _N, "a member that the enum does not declare"
)
UNKNOWN_FUNCTION = _register(
    "E1005", "unknown-function", _N, "a call of a function that is neither builtin nor declared"
)
UNKNOWN_ARGUMENT = _register(
    "E1006",
    "unknown-argument",
    _N,
    "a named argument that the callee has no parameter or field for",
)
UNKNOWN_MODULE = _register(
    "E1007", "unknown-module", _N, "an import of a module that the standard library does not have"
)
UNKNOWN_STATE_FIELD = _register(
    "E1008", "unknown-state-field", _N, "a state field that the `state` block does not declare"
)
UNKNOWN_TOOL = _register("E1009", "unknown-tool", _N, "a tool name that the env does not declare")
DUPLICATE_DECLARATION = _register(
    "E1010", "duplicate-declaration", _N, "two declarations with the same name in one scope"
)
UNKNOWN_METHOD = _register(
    "E1011", "unknown-method", _N, "a method that the value's type does not have"
)
DUPLICATE_ARGUMENT = _register(
    "E1012", "duplicate-argument", _N, "the same argument given twice in one call"
)
TASK_ENV_MISSING = _register(
    "E1020", "task-env-missing", _N, "the env file a task file names cannot be read"
)
TASK_ENV_OUTSIDE = _register(
    "E1021", "task-env-outside", _N, "a task file names an env outside its directory tree"
)
TASK_ENV_MISMATCH = _register(
    "E1022",
    "wrong-task-env",
    _N,
    "a task file names a file that is not its env: no env there, or not the spec given",
)
TASK_NAME_CLASH = _register(
    "E1023", "task-name-clash", _N, "a task named like one of the spec's or another task file's"
)
CHECK_NAME_TAKEN = _register(
    "E1097",
    "check-name-taken",
    _N,
    "a check's `answer` or `initial` that a state field, constant, type or local of that name hides",
)
STATE_NAME_TAKEN = _register(
    "E1098",
    "state-name-taken",
    _N,
    "a state field named `state`, or `state.x` where a local named `state` hides the state",
)
UNKNOWN_VARIANT_CASE = _register(
    "E1099", "unknown-variant-case", _N, "a case that the variant does not declare"
)

# ---- E2xx: types -----------------------------------------------------------------------------
TYPE_MISMATCH = _register(
    "E2001", "type-mismatch", _T, "a value of one type where another is expected"
)
INVALID_OPERAND = _register(
    "E2002", "invalid-operand", _T, "an operator applied to types it is not defined for"
)
CONDITION_NOT_BOOL = _register(
    "E2003", "condition-not-bool", _T, "a condition, check or invariant that is not a bool"
)
WRONG_ARITY = _register("E2004", "wrong-arity", _T, "a call with too many positional arguments")
MISSING_ARGUMENT = _register(
    "E2005", "missing-argument", _T, "a call that leaves out a required parameter or field"
)
NOT_OPTIONAL = _register(
    "E2006", "not-optional", _T, "`let ... else` on a value that can never be none"
)
REF_TO_NON_ENTITY = _register("E2007", "ref-to-non-entity", _T, "`ref X` where X is not an entity")
TABLE_OF_NON_ENTITY = _register(
    "E2008", "table-of-non-entity", _T, "`table X` where X is not an entity"
)
KEY_COUNT = _register(
    "E2009", "key-count", _T, "an entity without exactly one `key` field (or a record with one)"
)
TRANSITIONS_ON_NON_ENUM = _register(
    "E2010",
    "transitions-on-non-enum",
    _T,
    "a `transitions` clause on a field that is not of an enum type",
)
ENTITY_AS_VALUE = _register(
    "E2011", "entity-as-value", _T, "an entity type used as a field, parameter or collection type"
)
NOT_ITERABLE = _register(
    "E2012", "not-iterable", _T, "a `for` or comprehension over a value that is not a collection"
)
NOT_INDEXABLE = _register("E2013", "not-indexable", _T, "`x[i]` on a value that cannot be indexed")
INVALID_LITERAL = _register(
    "E2014", "invalid-literal", _T, "a literal that is not a valid value of its type"
)
MISPLACED_LAMBDA = _register(
    "E2015", "misplaced-lambda", _T, "a `lambda` anywhere but the `key=` of sorted/min/max"
)
INVALID_AUTO = _register(
    "E2016", "invalid-auto", _T, "`auto(...)` anywhere but the default of a `str` key field"
)
POSSIBLY_NONE = _register(
    "E2017", "possibly-none", _T, "an optional value used where a value is required"
)
UNHASHABLE_ELEMENT = _register(
    "E2097",
    "unhashable-element",
    _T,
    "a set element or map key of a type whose values change in place (record, variant, list, "
    "set, map, json)",
)
VARIANT_TAG_CLASH = _register(
    "E2098",
    "variant-tag-clash",
    _T,
    "a variant case declaring a field named like the variant's tag field",
)
VARIANT_NOT_NARROWED = _register(
    "E2099",
    "variant-not-narrowed",
    _T,
    "a field of one variant case read where the value may be another case",
)

# ---- E3xx: tools and effects -----------------------------------------------------------------
WRITE_IN_QUERY = _register("E3001", "write-in-query", _E, "a `query` tool that writes state")
WRITE_IN_PURE_CONTEXT = _register(
    "E3002", "write-in-pure-context", _E, "a write in a fn, check, invariant, default or constant"
)
ASSIGN_TO_KEY = _register("E3003", "assign-to-key", _E, "an assignment to an entity's key field")
MISSING_RETURN = _register(
    "E3004", "missing-return", _E, "a path through a tool or fn that ends without `return`"
)
UNREACHABLE_CODE = _register(
    "E3005", "unreachable-code", _E, "a statement after `return`, `fail`, `break` or `continue`"
)
ASSIGN_TO_READONLY = _register(
    "E3006", "assign-to-readonly", _E, "an assignment to a constant, a table or `initial`"
)
CALL_OF_PUBLIC_TOOL = _register(
    "E3007",
    "call-of-public-tool",
    _E,
    "a tool that calls a public tool (only `internal` tools and fns can be called)",
)
RECURSIVE_CALL = _register(
    "E3008",
    "recursive-call",
    _E,
    "a fn or internal tool that calls itself, directly or through others",
)

ASSIGN_TO_IMMUTABLE = _register(
    "E3009", "assign-to-immutable", _E, "an assignment to an `immutable` field of a row"
)
CALL_WITHOUT_ENVIRONMENT = _register(
    "E3010",
    "call-without-environment",
    _E,
    "a constant or a default value that calls a fn or a tool",
)

# ---- E4xx: invariants and tasks --------------------------------------------------------------
MISSING_INIT_VALUE = _register(
    "E4001",
    "missing-init-value",
    _K,
    "a task `init` that gives no value to a scalar state field without a default",
)
INIT_FILE_UNREADABLE = _register(
    "E4002",
    "init-file-unreadable",
    _K,
    "`init from` a file that is missing, unreadable or not a JSON object",
)
INIT_PATH_OUTSIDE_SPEC = _register(
    "E4020",
    "init-path-outside-spec",
    _K,
    "`init from` an absolute path or one that leaves the spec's directory",
)
INIT_FILE_UNSUITABLE = _register(
    "E4021",
    "init-file-unsuitable",
    _K,
    "`init from` something that is not a regular file, or a file over the size limit",
)
DEFAULT_NOT_CONSTANT = _register(
    "E4022",
    "default-not-constant",
    _K,
    "a default or constant that iterates: they are computed outside any tool call",
)
DEFAULT_FAILS = _register(
    "E4023", "default-fails", _K, "a parameter default that fails when it is computed"
)
VALUE_FAILS = _register(
    "E4024", "value-fails", _K, "a constant or a field default whose arithmetic fails (overflow)"
)

INVALID_INIT = _register(
    "E4003",
    "invalid-init",
    _K,
    "a task's initial state breaks a key, `unique`, `ref`, invariant or type",
)
SOLUTION_STEP_FAILS = _register(
    "E4004", "solution-step-fails", _K, "a call of a task's solution fails when it is replayed"
)
CHECK_FAILS_AFTER_SOLUTION = _register(
    "E4005", "check-fails-after-solution", _K, "a task's check is false after its solution runs"
)
SOLUTION_CHANGES_NOTHING = _register(
    "E4006", "solution-changes-nothing", _K, "a task whose solution leaves the state as it was"
)

CHECK_READS_SOLUTION_BINDING = _register(
    "E4007",
    "check-reads-solution-binding",
    _K,
    "a check that reads a `let` binding of the solution instead of the agent's run",
)
SOLVED_BY_DOING_NOTHING = _register(
    "E4008", "solved-by-doing-nothing", _K, "a task whose checks all pass before the agent acts"
)
SOLVED_BY_ONLY_READING = _register(
    "E4009",
    "solved-by-only-reading",
    _K,
    "a task whose checks all pass after only the solution's read-only calls",
)
MISSING_REFERENCE_ANSWER = _register(
    "E4010",
    "missing-reference-answer",
    _K,
    "a task with checks on `answer` whose solution states no `answer`",
)
INVALID_ALLOW = _register(
    "E4011",
    "invalid-allow",
    _K,
    "an `allow` clause that names no frame latitude: a word other than delete/insert, or a "
    "table's form on a scalar field",
)

# ---- W5xx: lints -----------------------------------------------------------------------------
MISSING_DESCRIPTION = _register(
    "W5001", "missing-description", _L, "a public tool or a task without a docstring"
)
QUERY_NAMED_LIKE_ACTION = _register(
    "W5002", "query-named-like-action", _L, "a `query` whose name says it changes something"
)
JSON_TYPE = _register(
    "W5003", "json-type", _L, "a field or parameter of the untyped `json` escape hatch"
)
UNUSED_DECLARATION = _register(
    "W5004", "unused-declaration", _L, "an enum, record, entity, fn or constant that nothing uses"
)
UNUSED_VARIABLE = _register("W5005", "unused-variable", _L, "a `let` variable that is never read")

WRITE_WITHOUT_EFFECT = _register(
    "W5008",
    "write-without-effect",
    _L,
    "a write to a local that lives nowhere in state and is never read afterwards",
)

CHECK_TRUE_AT_INIT = _register(
    "W5006", "check-true-at-init", _L, "a check that already passes before the agent acts"
)
CHECK_IGNORES_SOLUTION = _register(
    "W5007", "check-ignores-solution", _L, "a check that reads nothing the solution changes"
)

REDUNDANT_LET_ELSE = _register(
    "W5009",
    "redundant-let-else",
    _L,
    "`let x = v else ...` where a test already proved that `v` is not none",
)

SOLUTION_STEP_UNNOTICED = _register(
    "W5011",
    "solution-step-unnoticed",
    _L,
    "a task that still succeeds with one state-changing solution step left out",
)
FIELD_UNCHECKED = _register(
    "W5012", "field-unchecked", _L, "a field the solution changes that no check reads"
)
CHECK_NEVER_FALSE = _register(
    "W5013",
    "check-never-false",
    _L,
    "a check that is true in every state verification sees",
)
COUNTEREXAMPLE_REWARDED = _register(
    "W5014",
    "counterexample-rewarded",
    _L,
    "a task's `counterexample` run that scores above 0",
)

LIST_COMPARED_IN_ORDER = _register(
    "W5021",
    "list-compared-in-order",
    _L,
    "a check comparing a list the agent supplies with a literal by `==` (order matters)",
)
EXACT_PHRASE_OF_PROSE = _register(
    "W5022",
    "exact-phrase-of-prose",
    _L,
    "a check demanding an exact phrase of free text the agent writes (a paraphrase fails)",
)

# mutation testing of the grader (envdsl/tasks/mutation.py); numbered apart from the other
# task lints so that codes added next to them do not clash
MUTANT_SURVIVES = _register(
    "W5030",
    "mutant-survives",
    _L,
    "a plausible wrong run derived from the solution that still gets the full reward",
)
RIGHT_RUN_FAILS = _register(
    "W5031",
    "right-run-fails",
    _L,
    "a plausible right run (the solution reordered) that gets less than the full reward",
)

EMPTY_TASK_FILE = _register("W5020", "empty-task-file", _L, "a task file without tasks")
HIDDEN_CHARACTER = _register(
    "W5023",
    "hidden-character",
    _L,
    "a bidirectional or invisible control character in the text (Trojan Source)",
)

# ---- E9xx: internal --------------------------------------------------------------------------
INTERNAL_ERROR = _register(
    "E9001",
    "internal-error",
    Stage.INTERNAL,
    "the compiler failed; this is a bug in envdsl, not in the spec",
)
