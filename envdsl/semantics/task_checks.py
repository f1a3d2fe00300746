"""Stage 4c: type-checking tasks: `init` values, `solution` calls and `check` conditions.

Replaying the solution and evaluating the checks on real states needs the runtime and is a
later stage; this one makes sure that everything a task says is well-typed and names things
that exist.
"""

from __future__ import annotations

from envdsl.diagnostics import codes
from envdsl.semantics import types as t
from envdsl.semantics.check import BodyChecker
from envdsl.semantics.scope import Local, Scope
from envdsl.semantics.suggest import did_you_mean
from envdsl.syntax import ast
from envdsl.tasks.init_files import read_init_file


class TaskChecker:
    def __init__(self, body: BodyChecker) -> None:
        self.body = body
        self.checked = body.checked

    def check_all(self) -> None:
        for task in self.checked.env.of_type(ast.TaskDecl):
            self.task(task)

    def task(self, task: ast.TaskDecl) -> None:
        if isinstance(task.init, ast.InitBlock):
            self.init_block(task.init)
        elif isinstance(task.init, ast.InitFrom):
            self.init_file(task.init)
        else:
            self.missing_scalars(set(), task.name.span, "task")
        scope = Scope()
        if task.solution is not None:
            self.calls(task, task.solution, scope)
        for counterexample in task.counterexamples:
            # its own bindings: checks read neither (they judge the agent's run)
            self.calls(task, counterexample.steps, Scope())
        for allow in task.allows:
            self.allow(allow)
        for check in task.checks:
            self.body.enter("check", f"check:{task.name.text}:{check.text.value}")
            self.body.condition(check.cond, scope.child(), "a check")

    def calls(self, task: ast.TaskDecl, steps: tuple[ast.SolutionStep, ...], scope: Scope) -> None:
        """A list of tool calls (a solution, a counterexample), binding `let` names in scope."""
        self.body.enter("solution", f"task:{task.name.text}")
        for step in steps:
            result = self.solution_call(step.call, scope)
            if step.bind is not None:
                if scope.lookup(step.bind.text) is not None:
                    self.body.error(
                        codes.DUPLICATE_DECLARATION,
                        f"'{step.bind.text}' is already bound in this solution",
                        step.bind.span,
                    )
                binding = Local(step.bind.text, result, step.bind.span, "binding", True)
                scope.locals[step.bind.text] = binding
                self.checked.locals[id(step.bind)] = binding

    def allow(self, allow: ast.Allow) -> None:
        """An `allow` target names a state field; `T.f` a field of table T's entity, and
        `delete T`/`insert T` a table."""
        name = allow.table.text
        info = self.checked.state.get(name)
        if info is None:
            self.unknown_state_field(allow.table)
            return
        if allow.kind == "name":
            return
        if not isinstance(info.type, t.TableType):
            self.body.error(
                codes.INVALID_ALLOW,
                f"'{name}' is a scalar field, not a table: only `allow {name}` applies",
                allow.span,
                f"write `allow {name}`: a scalar field changes as a whole",
            )
            return
        if allow.field is None:
            return
        record = self.checked.records.get(info.type.entity)
        if record is None or allow.field.text in record.fields:
            return
        help, fixes = did_you_mean(allow.field.text, record.fields, allow.field.span)
        self.body.error(
            codes.UNKNOWN_FIELD,
            f"unknown field '{allow.field.text}' on {record.name}",
            allow.field.span,
            help,
            fixes,
        )

    def unknown_state_field(self, name: ast.Name) -> None:
        help, fixes = did_you_mean(name.text, self.checked.state, name.span)
        self.body.error(
            codes.UNKNOWN_STATE_FIELD,
            f"the state has no field '{name.text}'",
            name.span,
            help,
            fixes,
        )

    def init_block(self, init: ast.InitBlock) -> None:
        given: set[str] = set()
        for assign in init.assigns:
            name = assign.name.text
            self.body.enter("init", "")
            info = self.checked.state.get(name)
            if info is None:
                self.unknown_state_field(assign.name)
                self.body.expr(assign.value, Scope())
                continue
            if name in given:
                self.body.error(
                    codes.DUPLICATE_DECLARATION,
                    f"'{name}' is already initialised in this task",
                    assign.name.span,
                    help="keep one of the two values",
                )
                continue
            given.add(name)
            self.body.expect(assign.value, Scope(), info.type, f"initial value of '{name}'")
        self.missing_scalars(given, init.span, "`init`")

    def missing_scalars(self, given: set[str], span: object, where: str) -> None:
        for name, info in self.checked.state.items():
            if name in given or isinstance(info.type, t.TableType) or info.decl.default is not None:
                continue
            if isinstance(info.type, t.OptionalType) or t.is_error(info.type):
                continue
            self.body.error(
                codes.MISSING_INIT_VALUE,
                f"this {where} gives no value to state field '{name}' ({info.type})",
                span,  # type: ignore[arg-type]
                help=f"add `{name} = ...` to `init`, or give the field a default in `state`",
            )

    def init_file(self, init: ast.InitFrom) -> None:
        loaded = read_init_file(init.path.span.file, init.path.value)
        if loaded.code is not None:
            self.body.error(loaded.code, loaded.problem, init.path.span, help=loaded.help)
            return
        data = loaded.data
        assert isinstance(data, dict)
        for key in data:
            if key not in self.checked.state:
                help, fixes = did_you_mean(str(key), self.checked.state, init.path.span)
                self.body.error(
                    codes.UNKNOWN_STATE_FIELD,
                    f"init file '{init.path.value}' sets '{key}', which the state does not declare",
                    init.path.span,
                    help=help,
                )
        self.missing_scalars(
            {str(k) for k in data}, init.path.span, f"init file '{init.path.value}'"
        )

    def solution_call(self, call: ast.Call, scope: Scope) -> t.Type:
        assert isinstance(call.func, ast.NameRef)
        name = call.func.name
        info = self.checked.callables.get(name)
        if info is None or not info.is_tool or info.internal:
            public = [c.name for c in self.checked.tools if not c.internal]
            help, fixes = did_you_mean(name, public, call.func.span)
            reason = (
                "is internal; the agent cannot call it"
                if info is not None and info.internal
                else ""
            )
            for kwarg in call.kwargs:
                self.body.expr(kwarg.value, scope)
            return self.body.error(
                codes.UNKNOWN_TOOL,
                f"tool '{name}' {reason}".strip() if reason else f"unknown tool '{name}'",
                call.func.span,
                help,
                fixes,
            )
        params = [(p.name, p.type, not p.has_default) for p in info.params]
        self.body.arguments(call, scope, params, f"tool '{name}'", allow_positional=False)
        return info.result
