"""Stage 2: parse tree (envdsl.syntax.tree.Node) -> typed AST with spans.

Also reports the structural mistakes that the grammar accepts for LALR's sake but the
language does not: assignment to a call, `break` outside a loop, a solution step that is not
a tool call, a file without exactly one env.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Callable

from envdsl.diagnostics import DiagnosticSink, codes
from envdsl.syntax import ast
from envdsl.syntax.lalr import ParseTree
from envdsl.syntax.parse import parse_expression
from envdsl.syntax.strings import decode_literal, split_fstring
from envdsl.syntax.tokens import Token
from envdsl.syntax.tree import Node as TreeNode
from envdsl.util.source import SourceFile, Span

Node = Any  # a parse tree's node (envdsl.syntax.tree.Node) or a Token


_BRACES = frozenset({"LBRACE", "RBRACE", "MAP_LBRACE"})


def _children(tree: Node) -> list[Node]:
    """Children without placeholders and without the braces the grammar keeps as tokens."""
    # (every token of a tree is a tokens.Token: the fast parse's, the post-lexer's `update`)
    return [
        child
        for child in tree.children
        if child is not None and (child.__class__ is not Token or child.type not in _BRACES)
    ]


def _is(node: Node, *names: str) -> bool:
    return isinstance(node, TreeNode) and node.data in names


_PY_LITERALS = {"True": True, "False": False}


class AstBuilder:
    def __init__(self, source: SourceFile, sink: DiagnosticSink, offset: int = 0) -> None:
        self.source = source
        self.sink = sink
        self.offset = offset  # non-zero while building an f-string hole
        self.loop_depth = 0

    # ---- helpers ---------------------------------------------------------------------------
    def span(self, node: Node) -> Span:
        if node.__class__ is TreeNode:
            start, end = node.start, node.end
            if start is None or end is None:  # (both or neither: a node that covers no token)
                return Span(self.source.path, self.offset, self.offset)
        else:  # a Token
            start = node.start_pos or 0
            end = node.end_pos if node.end_pos is not None else start
        return Span(self.source.path, self.offset + start, self.offset + end)

    def name(self, node: Node) -> ast.Name:
        token: Any = node.children[0] if isinstance(node, TreeNode) else node
        return ast.Name(str(token.value), self.span(token))

    def text(self, node: Node) -> ast.Text:
        token: Any = node.children[0] if isinstance(node, TreeNode) else node
        decoded = decode_literal(str(token.value))
        for bad in decoded.bad_escapes:
            start = self.offset + (token.start_pos or 0) + bad
            self.sink.report(
                codes.INVALID_ESCAPE,
                f"unknown escape sequence '{token.value[bad:bad + 2]}'",
                Span(self.source.path, start, start + 2),
                help="the escapes are \\n \\t \\r \\\\ \\\" \\' \\0 \\{ \\}; write a backslash as \\\\",
            )
        return ast.Text(decoded.value, self.span(token))

    # ---- file ------------------------------------------------------------------------------
    def build_file(self, tree: Node, *, expect_module: bool) -> ast.SpecFile:
        imports: list[ast.Import] = []
        envs: list[ast.EnvDecl] = []
        task_blocks: list[ast.TasksFor] = []
        for item in _children(tree):
            if _is(item, "import_decl"):
                dotted = _children(item)[0]
                path = tuple(self.name(part) for part in _children(dotted))
                imports.append(ast.Import(path, self.span(item)))
            elif _is(item, "env_decl", "module_decl"):
                envs.append(self.env(item))
            elif _is(item, "tasks_decl"):
                task_blocks.append(self.tasks_for(item))
        whole = self.source.whole()
        if task_blocks and not envs and not expect_module:
            tasks_for = self.task_file(task_blocks, imports)
            return ast.SpecFile(self.source.path, (), None, whole, self.source.text, tasks_for)
        for block in task_blocks:  # in a spec (or a module): not a task file
            self.sink.report(
                codes.ONE_TASKS_BLOCK,
                "a `tasks for` block in a file that declares an env",
                block.target.span,
                help="write the tasks inside the env, or move the block to a task file",
            )
        env = envs[0] if envs else None
        wanted = "module" if expect_module else "env"
        if env is None:
            at = Span(self.source.path, len(self.source.text), len(self.source.text))
            self.sink.report(
                codes.ONE_ENV_PER_FILE,
                f"this file declares no {wanted}",
                at,
                help=f"wrap the declarations in `{wanted} Name {{ ... }}`",
            )
        else:
            for extra in envs[1:]:
                self.sink.report(
                    codes.ONE_ENV_PER_FILE,
                    f"a second {'module' if extra.is_module else 'env'} in one file",
                    extra.name.span,
                    help="put each env in a file of its own",
                )
            for decl in envs:
                if decl.is_module != expect_module:
                    self.sink.report(
                        codes.ONE_ENV_PER_FILE,
                        f"expected an `{wanted}`, found `{'module' if decl.is_module else 'env'}`",
                        decl.name.span,
                        help="stdlib files hold `module name { ... }`; specs hold `env Name { ... }`",
                    )
        return ast.SpecFile(self.source.path, tuple(imports), env, whole, self.source.text)

    def env(self, tree: Node) -> ast.EnvDecl:
        name_node, members_node = _children(tree)
        doc: ast.Text | None = None
        members: list[ast.Decl] = []
        for member in _children(members_node):
            if _is(member, "docstring"):
                if doc is None:
                    doc = self.text(_children(member)[0])
                continue
            built = self.member(member)
            if built is not None:
                members.append(built)
        return ast.EnvDecl(
            self.name(name_node), tree.data == "module_decl", doc, tuple(members), self.span(tree)
        )

    def tasks_for(self, tree: Node) -> ast.TasksFor:
        target, *members = _children(tree)
        tasks = tuple(self.decl_task_decl(m) for m in members if _is(m, "task_decl"))
        return ast.TasksFor(self.text(target), tasks, self.span(tree))

    def task_file(self, blocks: list[ast.TasksFor], imports: list[ast.Import]) -> ast.TasksFor:
        """A task file holds one `tasks for` block and nothing else (its env has the rest)."""
        for extra in blocks[1:]:
            self.sink.report(
                codes.ONE_TASKS_BLOCK,
                "a second `tasks for` block in one task file",
                extra.target.span,
                help="put the tasks of each env in a task file of its own",
            )
        for stray in imports:
            self.sink.report(
                codes.ONE_TASKS_BLOCK,
                "an import in a task file",
                stray.span,
                help="a task file uses what its env imports; put the import in the env's file",
            )
        return blocks[0]

    def member(self, node: Node) -> ast.Decl | None:
        builder: Callable[[ParseTree], ast.Decl] | None = getattr(self, f"decl_{node.data}", None)
        return builder(node) if builder is not None else None

    # ---- type declarations -----------------------------------------------------------------
    def decl_enum_decl(self, tree: Node) -> ast.EnumDecl:
        parts = _children(tree)
        members = []
        for member in parts[1:]:
            member_parts = _children(member)
            json_value = self.text(member_parts[1]) if len(member_parts) > 1 else None
            members.append(
                ast.EnumMember(self.name(member_parts[0]), json_value, self.span(member))
            )
        return ast.EnumDecl(self.name(parts[0]), tuple(members), None, self.span(tree))

    def decl_record_decl(self, tree: Node) -> ast.RecordDecl:
        return self.record(tree, is_entity=False)

    def decl_entity_decl(self, tree: Node) -> ast.RecordDecl:
        return self.record(tree, is_entity=True)

    def decl_variant_decl(self, tree: Node) -> ast.VariantDecl:
        parts = _children(tree)
        cases: list[ast.RecordDecl] = []
        doc: ast.Text | None = None
        for item in parts[2:]:
            if _is(item, "variant_case"):
                case = self.record(item, is_entity=False)
                tag = next((c for c in _children(item)[1:2] if _is(c, "string")), None)
                if tag is not None:
                    case = dataclasses.replace(case, json_tag=self.text(tag))
                cases.append(case)
            elif _is(item, "docstring") and doc is None:
                doc = self.text(_children(item)[0])
        return ast.VariantDecl(
            self.name(parts[0]), self.name(parts[1]), tuple(cases), doc, self.span(tree)
        )

    def record(self, tree: Node, *, is_entity: bool) -> ast.RecordDecl:
        parts = _children(tree)
        fields: list[ast.FieldDecl] = []
        invariants: list[ast.RowInvariant] = []
        uniques: list[ast.UniqueDecl] = []
        doc: ast.Text | None = None
        for item in parts[1:]:
            if _is(item, "field_decl"):
                fields.append(self.field(item))
            elif _is(item, "row_invariant"):
                text_node, cond = _children(item)
                invariants.append(
                    ast.RowInvariant(self.text(text_node), self.expr(cond), self.span(item))
                )
            elif _is(item, "unique_decl"):
                names = tuple(self.name(n) for n in _children(item))
                uniques.append(ast.UniqueDecl(names, self.span(item)))
            elif _is(item, "docstring") and doc is None:
                doc = self.text(_children(item)[0])
        return ast.RecordDecl(
            self.name(parts[0]),
            is_entity,
            tuple(fields),
            tuple(invariants),
            tuple(uniques),
            doc,
            self.span(tree),
        )

    def field(self, tree: Node) -> ast.FieldDecl:
        parts = _children(tree)
        is_key = _is(parts[0], "key_mod")
        if is_key:
            parts = parts[1:]
        name = self.name(parts[0])
        type_expr = self.type_expr(parts[1])
        unique = False
        immutable = False
        doc: ast.Text | None = None
        on_delete: ast.Name | None = None
        default: ast.Expr | None = None
        transitions: tuple[ast.Transition, ...] | None = None
        for item in parts[2:]:
            if _is(item, "unique_mod"):
                unique = True
            elif _is(item, "immutable_mod"):
                immutable = True
            elif _is(item, "field_doc"):
                doc = self.text(_children(item)[0])
            elif _is(item, "on_delete"):
                on_delete = self.name(_children(item)[0])
            elif _is(item, "transitions"):
                transitions = tuple(
                    ast.Transition(self.name(a), self.name(b), self.span(t))
                    for t in _children(item)
                    for a, b in [_children(t)]
                )
            else:
                default = self.expr(item)
        return ast.FieldDecl(
            name,
            type_expr,
            is_key,
            unique,
            doc,
            on_delete,
            default,
            transitions,
            self.span(tree),
            immutable,
        )

    def type_expr(self, node: Node) -> ast.TypeExpr:
        parts = _children(node)
        span = self.span(node)
        if node.data == "named_type":
            return ast.NamedType(self.name(parts[0]), span)
        if node.data == "generic_type":
            return ast.GenericType(
                self.name(parts[0]), tuple(self.type_expr(p) for p in parts[1:]), span
            )
        if node.data == "ref_type":
            return ast.RefType(self.name(parts[0]), span)
        return ast.OptionalType(self.type_expr(parts[0]), span)

    def decl_state_decl(self, tree: Node) -> ast.StateDecl:
        fields = []
        for item in _children(tree):
            name_node, type_node, *rest = item.children
            state_type: ast.TypeExpr | ast.TableType
            if _is(type_node, "table_type"):
                state_type = ast.TableType(self.name(_children(type_node)[0]), self.span(type_node))
            else:
                state_type = self.type_expr(type_node)
            doc_before, default_node, doc_after = rest
            doc_node = doc_before if doc_before is not None else doc_after
            fields.append(
                ast.StateField(
                    self.name(name_node),
                    state_type,
                    self.text(doc_node) if doc_node is not None else None,
                    self.expr(default_node) if default_node is not None else None,
                    self.span(item),
                )
            )
        return ast.StateDecl(tuple(fields), self.span(tree))

    def decl_invariant_decl(self, tree: Node) -> ast.InvariantDecl:
        text_node, cond = _children(tree)
        return ast.InvariantDecl(self.text(text_node), self.expr(cond), self.span(tree))

    def decl_const_decl(self, tree: Node) -> ast.ConstDecl:
        name_node, type_node, value = _children(tree)
        return ast.ConstDecl(
            self.name(name_node), self.type_expr(type_node), self.expr(value), self.span(tree)
        )

    # ---- functions and tools ---------------------------------------------------------------
    def params(self, node: Node | None) -> tuple[ast.Param, ...]:
        if node is None:
            return ()
        params = []
        for param in _children(node):
            name_node, type_node, doc1, default, doc2 = param.children
            doc_node = doc1 if doc1 is not None else doc2
            params.append(
                ast.Param(
                    self.name(name_node),
                    self.type_expr(type_node),
                    self.text(doc_node) if doc_node is not None else None,
                    self.expr(default) if default is not None else None,
                    self.span(param),
                )
            )
        return tuple(params)

    def decl_fn_decl(self, tree: Node) -> ast.FnDecl:
        name_node, params_node, result, body = tree.children
        built_body: ast.Expr | ast.Block
        built_body = self.block(body) if _is(body, "block") else self.expr(body)
        return ast.FnDecl(
            self.name(name_node),
            self.params(params_node),
            self.type_expr(result),
            built_body,
            self.span(tree),
        )

    def decl_tool_decl(self, tree: Node) -> ast.ToolDecl:
        internal, kind, name_node, params_node, result, body = tree.children
        block = self.block(body)
        doc: ast.Text | None = None
        stmts = block.stmts
        if stmts and isinstance(stmts[0], ast.ExprStmt) and isinstance(stmts[0].expr, ast.StrLit):
            doc = ast.Text(stmts[0].expr.value, stmts[0].span)
            block = ast.Block(stmts[1:], block.span)
        return ast.ToolDecl(
            self.name(name_node),
            str(_children(kind)[0].value),
            internal is not None,
            self.params(params_node),
            self.type_expr(result) if result is not None else None,
            block,
            doc,
            self.span(tree),
        )

    # ---- statements ------------------------------------------------------------------------
    def block(self, tree: Node) -> ast.Block:
        return ast.Block(tuple(self.stmt(s) for s in _children(tree)), self.span(tree))

    def stmt(self, node: Node) -> ast.Stmt:
        span = self.span(node)
        kind = node.data if isinstance(node, TreeNode) else ""
        parts = node.children if isinstance(node, TreeNode) else []
        if kind == "let_stmt":
            name_node, type_node, value, message = parts
            return ast.Let(
                self.name(name_node),
                self.type_expr(type_node) if type_node is not None else None,
                self.expr(value),
                self.expr(message) if message is not None else None,
                span,
            )
        if kind == "require_stmt":
            return ast.Require(self.expr(parts[0]), self.expr(parts[1]), span)
        if kind == "fail_stmt":
            return ast.Fail(self.expr(parts[0]), span)
        if kind == "return_stmt":
            return ast.Return(self.expr(parts[0]) if parts[0] is not None else None, span)
        if kind == "if_stmt":
            branches = [ast.IfBranch(self.expr(parts[0]), self.block(parts[1]), span)]
            orelse: ast.Block | None = None
            for item in parts[2:]:
                if _is(item, "elif_clause"):
                    cond, body = _children(item)
                    branches.append(
                        ast.IfBranch(self.expr(cond), self.block(body), self.span(item))
                    )
                elif item is not None:
                    orelse = self.block(item)
            return ast.If(tuple(branches), orelse, span)
        if kind == "for_stmt":
            targets_node, iterable, body = parts
            self.loop_depth += 1
            built = self.block(body)
            self.loop_depth -= 1
            return ast.For(self.targets(targets_node), self.expr(iterable), built, span)
        if kind in ("break_stmt", "continue_stmt"):
            word = kind.split("_")[0]
            if self.loop_depth == 0:
                self.sink.report(
                    codes.LOOP_CONTROL_OUTSIDE_LOOP,
                    f"`{word}` outside a `for` loop",
                    span,
                    help="use `return` or `fail` to leave a tool early",
                )
            return ast.Break(span) if word == "break" else ast.Continue(span)
        if kind == "assign_stmt":
            target_node, op_node, value = parts
            target = self.expr(target_node)
            if not isinstance(target, (ast.NameRef, ast.Attribute, ast.Index)):
                self.sink.report(
                    codes.INVALID_ASSIGNMENT_TARGET,
                    "cannot assign to this expression",
                    target.span,
                    help="assign to a variable (`x = ...`), a field (`row.f = ...`) or a map entry (`m[k] = ...`)",
                )
            return ast.Assign(target, str(op_node.children[0]), self.expr(value), span)
        return ast.ExprStmt(self.expr(parts[0]), span)

    def targets(self, node: Node) -> tuple[ast.Name, ...]:
        return tuple(self.name(n) for n in _children(node))

    # ---- tasks -----------------------------------------------------------------------------
    def decl_task_decl(self, tree: Node) -> ast.TaskDecl:
        parts = _children(tree)
        doc: ast.Text | None = None
        init: ast.InitBlock | ast.InitFrom | None = None
        solution: tuple[ast.SolutionStep, ...] | None = None
        answer: ast.Text | None = None
        checks: list[ast.Check] = []
        allows: list[ast.Allow] = []
        counterexamples: list[ast.Counterexample] = []
        for item in parts[1:]:
            if _is(item, "docstring"):
                doc = doc or self.text(_children(item)[0])
            elif _is(item, "init_block", "init_from"):
                if init is not None:
                    self._duplicate_section("init", item)
                built_init: ast.InitBlock | ast.InitFrom
                if item.data == "init_from":
                    built_init = ast.InitFrom(self.text(_children(item)[0]), self.span(item))
                else:
                    assigns = tuple(
                        ast.InitAssign(
                            self.name(a.children[0]), self.expr(a.children[1]), self.span(a)
                        )
                        for a in _children(item)
                    )
                    built_init = ast.InitBlock(assigns, self.span(item))
                init = init or built_init
            elif _is(item, "solution_block"):
                if solution is not None:
                    self._duplicate_section("solution", item)
                calls = [s for s in _children(item) if not _is(s, "answer_step")]
                steps = tuple(s for s in map(self.solution_step, calls) if s is not None)
                for step in _children(item):
                    if _is(step, "answer_step"):
                        if answer is not None:
                            self._duplicate_section("answer", step)
                        answer = answer or self.text(_children(step)[0])
                solution = solution if solution is not None else steps
            elif _is(item, "check_item"):
                text_node, cond = _children(item)
                checks.append(ast.Check(self.text(text_node), self.expr(cond), self.span(item)))
            elif _is(item, "allow_item"):
                allows.extend(self.allow_target(target) for target in _children(item))
            elif _is(item, "counterexample_block"):
                calls = [s for s in _children(item) if _is(s, "solution_step")]
                steps = tuple(s for s in map(self.solution_step, calls) if s is not None)
                counterexamples.append(ast.Counterexample(steps, self.span(item)))
        return ast.TaskDecl(
            self.name(parts[0]),
            doc,
            init,
            solution,
            tuple(checks),
            self.span(tree),
            answer,
            tuple(allows),
            tuple(counterexamples),
        )

    def allow_target(self, node: Node) -> ast.Allow:
        names = [self.name(n) for n in _children(node)]
        span = self.span(node)
        if node.data == "allow_kind":
            word, table = names
            if word.text not in ("delete", "insert"):
                self.sink.report(
                    codes.INVALID_ALLOW,
                    f"`allow {word.text} {table.text}` is no frame clause",
                    span,
                    help="write `allow T.field` (that field of any row may change), `allow "
                    "delete T`, `allow insert T`, or `allow name` (a scalar field or a whole "
                    "table)",
                )
            return ast.Allow(word.text, table, None, span)
        if len(names) == 2:
            return ast.Allow("field", names[0], names[1], span)
        return ast.Allow("name", names[0], None, span)

    def _duplicate_section(self, word: str, node: Node) -> None:
        self.sink.report(
            codes.DUPLICATE_TASK_SECTION,
            f"this task already has {'an' if word[0] in 'aeiou' else 'a'} `{word}` section",
            self.span(node),
            help=f"merge the two `{word}` sections into one",
        )

    def solution_step(self, node: Node) -> ast.SolutionStep | None:
        bind_node, call_node = node.children
        call = self.expr(call_node)
        if not isinstance(call, ast.Call) or not isinstance(call.func, ast.NameRef) or call.args:
            self.sink.report(
                codes.INVALID_SOLUTION_STEP,
                "a solution step must call a tool with named arguments",
                call.span,
                help='write `tool_name(arg="value", ...)`, optionally `let x = tool_name(...)`',
            )
            return None
        bind = self.name(bind_node) if bind_node is not None else None
        return ast.SolutionStep(bind, call, self.span(node))

    # ---- expressions -----------------------------------------------------------------------
    def expr(self, node: Node) -> ast.Expr:
        span = self.span(node)
        if isinstance(node, Token):  # only reachable through odd inlining; treat as a name
            return ast.NameRef(str(node.value), span)
        kind = node.data
        parts = node.children
        if kind == "name_ref":
            text = str(_children(node)[0].children[0].value)
            if text in _PY_LITERALS:
                return ast.BoolLit(_PY_LITERALS[text], span)
            if text == "None":
                return ast.NoneLit(span)
            return ast.NameRef(text, span)
        if kind == "attribute":  # (the most frequent kinds first)
            obj = self.expr(parts[0])
            if isinstance(obj, ast.NameRef) and obj.name == "state" and not obj.qualified:
                # `state.flights`: the state field itself, whatever a local is named
                return ast.NameRef(self.name(parts[1]).text, span, qualified=True)
            return ast.Attribute(obj, self.name(parts[1]), span)
        if kind == "call":
            return self.call(node, span)
        if kind == "string":
            return ast.StrLit(self.text(node).value, span)
        if kind == "int_lit":
            return ast.IntLit(int(str(parts[0].value).replace("_", "")), span)
        if kind == "float_lit":
            return ast.FloatLit(float(str(parts[0].value).replace("_", "")), span)
        if kind == "fstring":
            return self.fstring(parts[0], span)
        if kind in ("true_lit", "false_lit"):
            return ast.BoolLit(kind == "true_lit", span)
        if kind == "none_lit":
            return ast.NoneLit(span)
        if kind == "index":
            return ast.Index(self.expr(parts[0]), self.expr(parts[1]), span)
        if kind == "slice":
            obj, lower, upper = parts
            return ast.Slice(
                self.expr(obj),
                self.expr(lower) if lower is not None else None,
                self.expr(upper) if upper is not None else None,
                span,
            )
        if kind == "unary":
            op, operand = parts
            return ast.Unary(str(op.children[0].value), self.expr(operand), span)
        if kind == "binary":
            if len(parts) == 2:
                return ast.Binary("**", self.expr(parts[0]), self.expr(parts[1]), span)
            left, op, right = parts
            return ast.Binary(str(op.children[0].value), self.expr(left), self.expr(right), span)
        if kind in ("or_op", "and_op"):
            return ast.BoolOp(kind[:-3], self.expr(parts[0]), self.expr(parts[1]), span)
        if kind == "not_op":
            return ast.Not(self.expr(parts[0]), span)
        if kind == "compare":
            operands = [self.expr(p) for p in parts[0::2]]
            ops = [" ".join(str(t.value) for t in op.children) for op in parts[1::2]]
            return ast.Compare(tuple(operands), tuple(ops), span)
        if kind == "conditional":
            body, test, orelse = parts
            return ast.Conditional(self.expr(body), self.expr(test), self.expr(orelse), span)
        if kind == "lambda_expr":
            return ast.Lambda(tuple(self.name(p) for p in parts[:-1]), self.expr(parts[-1]), span)
        if kind == "list_lit":
            return ast.ListLit(tuple(self.expr(p) for p in parts if p is not None), span)
        if kind == "set_lit":
            return ast.SetLit(tuple(self.expr(p) for p in _children(node)), span)
        if kind == "map_lit":
            entries = tuple(self.map_entry(e) for e in _children(node))
            return ast.MapLit(entries, span)
        if kind in ("list_comp", "set_comp", "map_comp"):
            items = _children(node)
            clauses = self.clauses(items[1:])
            if kind == "map_comp":
                entry = self.map_entry(items[0])
                return ast.Comprehension("map", entry.key, entry.value, clauses, span)
            return ast.Comprehension(kind[:-5], self.expr(items[0]), None, clauses, span)
        raise ValueError(f"unexpected parse node {kind}")  # a grammar/builder mismatch: E9001

    def map_entry(self, node: Node) -> ast.MapEntry:
        key, value = node.children
        return ast.MapEntry(self.expr(key), self.expr(value), self.span(node))

    def clauses(self, nodes: list[Node]) -> tuple[ast.CompFor | ast.CompIf, ...]:
        built: list[ast.CompFor | ast.CompIf] = []
        for clause in nodes:
            if clause.data == "comp_for":
                target, iterable = clause.children
                built.append(
                    ast.CompFor(self.targets(target), self.expr(iterable), self.span(clause))
                )
            else:
                built.append(ast.CompIf(self.expr(clause.children[0]), self.span(clause)))
        return tuple(built)

    def call(self, node: Node, span: Span) -> ast.Call:
        func_node, args_node = node.children
        func = self.expr(func_node)
        if args_node is None:
            return ast.Call(func, (), (), span)
        if args_node.data == "generator_arg":
            items = args_node.children
            generator = ast.Comprehension(
                "gen", self.expr(items[0]), None, self.clauses(items[1:]), self.span(args_node)
            )
            return ast.Call(func, (generator,), (), span)
        args: list[ast.Expr] = []
        kwargs: list[ast.KeywordArg] = []
        for arg in _children(args_node):
            if _is(arg, "keyword_arg"):
                name_node, value = arg.children
                kwargs.append(
                    ast.KeywordArg(self.name(name_node), self.expr(value), self.span(arg))
                )
            else:
                positional = self.expr(arg)
                if kwargs:
                    self.sink.report(
                        codes.SYNTAX_ERROR,
                        "a positional argument cannot follow a named one",
                        positional.span,
                        help="name this argument too, or move it before the named ones",
                    )
                args.append(positional)
        return ast.Call(func, tuple(args), tuple(kwargs), span)

    def fstring(self, token: Token, span: Span) -> ast.Expr:
        raw = str(token.value)
        base = self.offset + (token.start_pos or 0)
        pieces = split_fstring(raw)
        for bad in pieces.bad_escapes:
            self.sink.report(
                codes.INVALID_ESCAPE,
                f"unknown escape sequence '{raw[bad:bad + 2]}'",
                Span(self.source.path, base + bad, base + bad + 2),
                help="the escapes are \\n \\t \\r \\\\ \\\" \\' \\0; write a backslash as \\\\",
            )
        if pieces.error is not None:
            at, message = pieces.error
            self.sink.report(
                codes.INVALID_FSTRING,
                f"f-string: {message}",
                Span(self.source.path, base + at, base + at + 1),
                help="write `{expression}` for a value and `{{` or `}}` for a literal brace",
            )
            return ast.StrLit(raw[2:-1], span)
        parts: list[str | ast.FStringPart] = []
        for piece in pieces.parts:
            if isinstance(piece, str):
                parts.append(piece)
                continue
            hole_offset = base + piece.offset
            tree = parse_expression(piece.text, self.source, hole_offset, self.sink)
            if tree is None:
                return ast.StrLit(raw[2:-1], span)
            inner = AstBuilder(self.source, self.sink, hole_offset)
            expr = inner.expr(tree)
            hole_span = Span(self.source.path, hole_offset, hole_offset + len(piece.text))
            parts.append(ast.FStringPart(expr, piece.format_spec, hole_span))
        return ast.FString(tuple(parts), span)


def build_ast(
    tree: Node, source: SourceFile, sink: DiagnosticSink, *, expect_module: bool = False
) -> ast.SpecFile:
    return AstBuilder(source, sink).build_file(tree, expect_module=expect_module)
