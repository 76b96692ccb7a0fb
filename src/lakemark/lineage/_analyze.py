"""The static analyser: walks a Glue/PySpark script's AST and follows frames through it.

The script is parsed with :mod:`ast` and interpreted abstractly — never executed, never
imported. Values are constants, strings with unknown parts (:class:`DynStr`), frames
(:class:`Frame`), column expressions, API objects and user functions. Both branches of an
``if`` are followed and their frames merged; a loop over a known list is unrolled, any other
loop body is followed once; helper functions and classes (in the script or its extra py files) are
followed at each call. The Glue and Spark API calls themselves are modelled in :mod:`._api`.

What cannot be known is kept: an unknown call that receives a frame, a UDF, a dynamic table
name, a job argument without a value — each becomes a warning with its line, and the affected
columns carry UNKNOWN edges or the dataset is marked dynamic.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from typing import Any

from ..redaction import redact, redact_source
from ._analyze_expr import _MAX_UNROLL, ExpressionEvaluator, _as_text, _hashable, _Scope
from ._datasets import DatasetResolver
from ._graph import IDENTITY, TRANSFORMATION, JobLineage, LineageWarning
from ._objects import (
    Bound,
    Instance,
    Lambda,
    Method,
    Obj,
    UserClass,
    UserFunc,
    import_value,
    predefined,
)
from ._values import ColExpr, DynStr, Frame, Unknown, combine_exprs, merge_frames

__all__ = ["analyze_script"]

_MAX_DEPTH = 12


class _Stop(Exception):
    """Ends a block after ``return`` / ``break`` / ``continue``."""


def analyze_script(source: str, *, job: str, namespace: str, resolver: DatasetResolver,
                   arguments: dict[str, str] | None = None,
                   modules: dict[str, tuple[str, str]] | None = None,
                   file: str = "script.py") -> JobLineage:
    """The lineage of one script (``source``); never raises for what the script does —
    unsupported or unknown constructs become warnings in the result."""
    interp = _Interpreter(resolver, dict(arguments or {}), dict(modules or {}), file)
    resolver.warn = interp.warn
    try:
        tree = _parse(source, file, interp.warn)
    except SyntaxError as exc:
        interp.warn(f"the script is not valid Python: {exc.msg}", exc.lineno or 0)
        return interp.result(job, namespace, source)
    except ValueError as exc:  # e.g. NUL bytes
        interp.warn(f"the script cannot be parsed: {exc}", 0)
        return interp.result(job, namespace, source)
    try:
        interp.run_module(tree, interp.globals)
    except RecursionError:
        interp.warn("the script is nested too deeply to analyse completely", 0)
    except Exception as exc:  # noqa: BLE001 - one odd construct never stops a scan
        interp.warn(f"the analyser stopped on a construct it cannot handle "
                    f"({type(exc).__name__}: {exc}); the rest of the script is not analysed",
                    0)
    return interp.result(job, namespace, source)


_PRINT = re.compile(r"^(\s*)print(?:\s+(?![\s(=.])(.*?)|\s*)(\s*#.*)?$")
_EXCEPT = re.compile(r"^(\s*except\s+[\w.()\s,]*?)\s*,\s*(\w+)\s*:")


def _parse(source: str, file: str, warn: Any) -> ast.Module:
    """The script's syntax tree. Scripts of Glue 0.9/1.0 are Python 2: when the text is not
    Python 3, ``print x`` and ``except E, e:`` are rewritten (in memory) and the parse
    retried, as are tabs mixed with spaces; either is reported."""
    try:
        return ast.parse(source, filename=file)
    except TabError:
        tree = ast.parse(source.expandtabs(8), filename=file)
        warn("the script mixes tabs and spaces; read with tabs expanded", 0)
        return tree
    except SyntaxError as first:
        lines = []
        for text in source.expandtabs(8).splitlines():
            m = _PRINT.match(text)
            if m:
                text = f"{m.group(1)}print({m.group(2) or ''}){m.group(3) or ''}"
            text = _EXCEPT.sub(r"\1 as \2:", text)
            lines.append(text)
        try:
            tree = ast.parse("\n".join(lines) + "\n", filename=file)
        except SyntaxError:
            raise first from None
        warn("the script is Python 2 (Glue 0.9/1.0); read after rewriting its print "
             "statements and except clauses", 0)
        return tree


class _Interpreter(ExpressionEvaluator):
    def __init__(self, resolver: DatasetResolver, arguments: dict[str, str],
                 modules: dict[str, tuple[str, str]], file: str) -> None:
        super().__init__(resolver, arguments)
        self.modules = modules
        self.file = file
        self.current_file = file
        self.globals: dict[str, Any] = predefined()
        self.loaded: dict[str, dict[str, Any]] = {}
        self.depth = 0
        self.active: set[int] = set()
        self.returns: list[list[Any]] = []
        self.star_functions = False
        #: inside a loop over values the analyser cannot know (its body is followed once)
        self.unknown_loops = 0
        #: lists filled in such a loop: their length is not known
        self.uncertain: set[int] = set()
        #: (class defining the running method, its self) — for super()
        self.classes: list[tuple[UserClass | None, Any]] = []

    # -- results ------------------------------------------------------------------------------
    def warn(self, message: str, line: int) -> None:
        w = LineageWarning(redact(message), line, self.current_file)
        if w not in self.warnings:
            self.warnings.append(w)

    def result(self, job: str, namespace: str, source: str) -> JobLineage:
        return JobLineage(job, namespace, self.file, tuple(self.inputs.values()),
                          tuple(self.outputs), tuple(self.warnings), redact_source(source))

    # -- statements ---------------------------------------------------------------------------
    def run_module(self, tree: ast.Module, env: dict[str, Any]) -> None:
        try:
            self.block(tree.body, env)
        except _Stop:
            pass

    def block(self, body: list[ast.stmt], env: dict[str, Any]) -> None:
        for stmt in body:
            self.stmt(stmt, env)

    def stmt(self, node: ast.stmt, env: dict[str, Any]) -> None:
        line = node.lineno
        if isinstance(node, ast.Assign):
            value = self.eval(node.value, env)
            for target in node.targets:
                self.assign(target, value, env)
        elif isinstance(node, ast.AnnAssign):
            if node.value is not None:
                self.assign(node.target, self.eval(node.value, env), env)
        elif isinstance(node, ast.AugAssign):
            current = self.eval(node.target, env) if isinstance(node.target, ast.Name) \
                else Unknown("augmented assignment", line)
            value = self.binop(node.op, current, self.eval(node.value, env), line)
            self.assign(node.target, value, env)
        elif isinstance(node, ast.Expr):
            self.eval(node.value, env)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            env[node.name] = self.define(node, env)
        elif isinstance(node, ast.ClassDef):
            env[node.name] = self.define_class(node, env)
        elif isinstance(node, ast.Import):
            for alias in node.names:
                self.do_import(alias.name, alias.asname, env, line, whole=alias.asname is None)
        elif isinstance(node, ast.ImportFrom):
            self.import_from(node, env)
        elif isinstance(node, ast.If):
            self.branch(node, env)
        elif isinstance(node, (ast.For, ast.AsyncFor)):
            self.loop(node, env)
        elif isinstance(node, ast.While):
            self.run_branch(node.body, env)
            self.run_branch(node.orelse, env)
        elif isinstance(node, (ast.With, ast.AsyncWith)):
            for item in node.items:
                value = self.eval(item.context_expr, env)
                if item.optional_vars is not None:
                    self.assign(item.optional_vars, value, env)
            self.block(node.body, env)
        elif isinstance(node, ast.Try) or type(node).__name__ == "TryStar":
            self.run_branch(node.body, env)  # type: ignore[attr-defined]
            for handler in node.handlers:  # type: ignore[attr-defined]
                self.run_branch(handler.body, env)
            self.run_branch(node.orelse, env)  # type: ignore[attr-defined]
            self.run_branch(node.finalbody, env)  # type: ignore[attr-defined]
        elif isinstance(node, ast.Return):
            value = self.eval(node.value, env) if node.value is not None else None
            if self.returns:
                self.returns[-1].append(value)
            raise _Stop
        elif isinstance(node, (ast.Break, ast.Continue)):
            raise _Stop
        elif isinstance(node, ast.Match):
            for case in node.cases:
                self.run_branch(case.body, env)
        # pass, global, nonlocal, delete, raise, assert: nothing flows

    def run_branch(self, body: list[ast.stmt], env: dict[str, Any]) -> None:
        try:
            self.block(body, env)
        except _Stop:
            pass

    def branch(self, node: ast.If, env: dict[str, Any]) -> None:
        test = self.eval(node.test, env)
        if isinstance(test, (bool, int, str)) and not isinstance(test, DynStr):
            self.run_branch(node.body if test else node.orelse, env)
            return
        before = dict(env)
        self.run_branch(node.body, env)
        after_body = dict(env)
        env.clear()
        env.update(before)
        self.run_branch(node.orelse, env)
        for key in set(after_body) | set(env):
            a = after_body.get(key, before.get(key))
            b = env.get(key, before.get(key))
            if a is b:
                continue
            if isinstance(a, Frame) and isinstance(b, Frame):
                env[key] = merge_frames([a, b])
            elif isinstance(a, (str, DynStr)) and isinstance(b, (str, DynStr)) and a != b:
                env[key] = self.either(a, b, node.lineno)
            elif isinstance(a, dict) and isinstance(b, dict) and a != b:
                env[key] = {k: self.either(a.get(k), b.get(k), node.lineno)
                            for k in dict.fromkeys([*a, *b])}
            elif key not in env or (b is before.get(key) and a is not before.get(key)):
                env[key] = a

    def loop(self, node: ast.For | ast.AsyncFor, env: dict[str, Any]) -> None:
        items = self.iterate(self.eval(node.iter, env))
        if items is None:
            self.assign(node.target, Unknown("loop variable", node.lineno), env)
            self.unknown_loops += 1
            try:
                self.run_branch(node.body, env)
            finally:
                self.unknown_loops -= 1
        else:
            for item in items[:_MAX_UNROLL]:
                self.assign(node.target, item, env)
                self.run_branch(node.body, env)
        self.run_branch(node.orelse, env)

    def iterate(self, value: Any) -> list[Any] | None:
        if isinstance(value, (list, tuple)):
            return list(value)
        if isinstance(value, dict):
            return list(value)
        if isinstance(value, Obj) and value.kind == "items" and isinstance(value.data.get("of"),
                                                                             dict):
            return [tuple(kv) for kv in value.data["of"].items()]
        if isinstance(value, Obj) and value.kind == "collection":
            return list(value.data.get("frames", {}))
        return None

    def assign(self, target: ast.expr, value: Any, env: dict[str, Any]) -> None:
        if isinstance(target, ast.Name):
            env[target.id] = value
        elif isinstance(target, (ast.Tuple, ast.List)):
            values = list(value) if isinstance(value, (tuple, list)) and \
                len(value) == len(target.elts) else None
            for i, elt in enumerate(target.elts):
                item = values[i] if values is not None else Unknown("unpacking", target.lineno)
                if isinstance(elt, ast.Starred):
                    elt = elt.value
                self.assign(elt, item, env)
        elif isinstance(target, ast.Subscript):
            container = self.eval(target.value, env)
            key = self.eval(target.slice, env)
            if isinstance(container, dict) and _hashable(key):
                container[key] = value
            elif isinstance(container, Obj) and container.kind == "args" and \
                    isinstance(key, str):
                container.data.setdefault("set", {})[key] = value  # args["x"] = "…"
            elif isinstance(container, Obj) and container.kind == "pandas":
                ops = container.data.get("opaque", "")
                container.data["opaque"] = f"{ops}, column assignment" if ops \
                    else "column assignment"
        elif isinstance(target, ast.Starred):
            self.assign(target.value, value, env)
        elif isinstance(target, ast.Attribute):
            owner = self.eval(target.value, env)
            if isinstance(owner, (Instance, UserClass)):
                owner.attrs[target.attr] = value  # self.x = …
        # other attributes (module.x = …) are not tracked

    # -- functions and imports ------------------------------------------------------------------
    def define(self, node: ast.FunctionDef | ast.AsyncFunctionDef, env: dict[str, Any]) -> Any:
        for deco in node.decorator_list:
            target = deco.func if isinstance(deco, ast.Call) else deco
            value = self.eval(target, env)
            if isinstance(value, Obj) and value.kind == "func" and \
                    value.name in ("udf", "pandas_udf"):
                return Obj("udf", node.name, {"line": node.lineno})
        defaults: dict[str, Any] = {}
        args = node.args
        positional = args.posonlyargs + args.args
        for arg, default in zip(positional[len(positional) - len(args.defaults):], args.defaults):
            defaults[arg.arg] = self.eval(default, env)
        for arg, kw_default in zip(args.kwonlyargs, args.kw_defaults):
            if kw_default is not None:
                defaults[arg.arg] = self.eval(kw_default, env)
        return UserFunc(node, env, defaults, self.current_file)

    def define_class(self, node: ast.ClassDef, env: dict[str, Any]) -> UserClass:
        """A class of the script: methods are analysed when called (``self`` is an
        :class:`Instance` whose attributes the methods set), base classes of the script
        contribute theirs."""
        cls = UserClass(node.name, {}, {})
        for base in node.bases:
            parent = self.eval(base, env)
            if isinstance(parent, UserClass):
                cls.bases.append(parent)
                cls.methods.update(parent.methods)
                cls.attrs.update(parent.attrs)
                cls.kinds.update(parent.kinds)
        for stmt in node.body:
            if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
                cls.methods[stmt.name] = self.define(stmt, env)
                cls.own.add(stmt.name)
                decorators = {d.id for d in stmt.decorator_list if isinstance(d, ast.Name)}
                if "staticmethod" in decorators:
                    cls.kinds[stmt.name] = "static"
                elif "classmethod" in decorators:
                    cls.kinds[stmt.name] = "class"
                elif "property" in decorators:
                    cls.kinds[stmt.name] = "property"
            elif isinstance(stmt, ast.Assign):
                value = self.eval(stmt.value, env)
                for target in stmt.targets:
                    if isinstance(target, ast.Name):
                        cls.attrs[target.id] = value
        return cls

    def member(self, owner: Instance | UserClass, attr: str, line: int) -> Any:
        cls = owner.cls if isinstance(owner, Instance) else owner
        if attr in owner.attrs:
            return owner.attrs[attr]
        if attr in cls.attrs:
            return cls.attrs[attr]
        if attr in cls.methods:
            kind = cls.kinds.get(attr, "")
            func = cls.methods[attr]
            if kind == "static":
                return func
            if kind == "class":
                return Bound(func, cls)
            if kind == "property" and isinstance(owner, Instance):
                return self.call(func, [owner], {}, line, f"{cls.name}.{attr}")
            return Bound(func, owner) if isinstance(owner, Instance) else func
        return Unknown(f"{cls.name}.{attr}", line)

    def super_member(self, proxy: Obj, attr: str, line: int) -> Any:
        """``super().attr`` inside a method: the next class after the defining one."""
        after: UserClass = proxy.data["after"]
        self_value = proxy.data["self"]
        owner = self_value.cls if isinstance(self_value, Instance) else self_value
        chain = owner.mro() if isinstance(owner, UserClass) else []
        rest = chain[chain.index(after) + 1:] if after in chain else []
        for cls in rest:
            if attr in cls.own:
                func = cls.methods[attr]
                return func if cls.kinds.get(attr) == "static" else Bound(func, self_value)
        return Unknown(f"super().{attr}", line)

    def call_user(self, func: UserFunc, args: list[Any], kwargs: dict[str, Any],
                  line: int) -> Any:
        key = id(func.node)
        if key in self.active or self.depth >= _MAX_DEPTH:
            self.warn(f"recursive or deeply nested call of {func.node.name}(); not followed",
                      line)
            return Unknown(f"recursive call {func.node.name}", line)
        params = func.node.args
        positional = [a.arg for a in params.posonlyargs + params.args]
        local: dict[str, Any] = dict(func.defaults)
        for name, value in zip(positional, args):
            local[name] = value
        if params.vararg is not None:
            local[params.vararg.arg] = tuple(args[len(positional):])
        extra: dict[str, Any] = {}
        for name, value in kwargs.items():
            if name in positional or any(a.arg == name for a in params.kwonlyargs):
                local[name] = value
            else:
                extra[name] = value
        if params.kwarg is not None:
            local[params.kwarg.arg] = extra
        for name in positional + [a.arg for a in params.kwonlyargs]:
            local.setdefault(name, Unknown(f"parameter {name} of {func.node.name}", line))
        env = _Scope(local, func.globals)
        self.active.add(key)
        self.depth += 1
        self.returns.append([])
        saved_file = self.current_file
        self.current_file = func.file
        try:
            self.run_branch(func.node.body, env)  # type: ignore[arg-type]
        finally:
            self.current_file = saved_file
            self.depth -= 1
            self.active.discard(key)
            results = self.returns.pop()
        frames = [r for r in results if isinstance(r, Frame)]
        if frames:
            return merge_frames(frames) if len(frames) > 1 else frames[0]
        known = [r for r in results if r is not None]
        if len(known) > 1 and all(isinstance(r, (str, DynStr)) for r in known):
            out = known[0]
            for r in known[1:]:
                out = self.either(out, r, line)
            return out
        return known[-1] if known else None

    def do_import(self, name: str, asname: str | None, env: dict[str, Any], line: int,
                  whole: bool = False) -> None:
        if name in self.modules or name.split(".")[0] in self.modules:
            module = self.load_module(name, line)
            if asname:
                env[asname] = module
            else:
                env[name.split(".")[0]] = self.load_module(name.split(".")[0], line)
            return
        value = import_value(name)
        if asname:
            env[asname] = value
        else:
            env[name.split(".")[0]] = import_value(name.split(".")[0])

    def import_from(self, node: ast.ImportFrom, env: dict[str, Any]) -> None:
        module = "." * node.level + (node.module or "")
        base = module.lstrip(".")
        for alias in node.names:
            if alias.name == "*":
                if base == "pyspark.sql.functions":
                    self.star_functions = True
                elif base in self.modules:
                    loaded = self.load_module(base, node.lineno)
                    if isinstance(loaded, Obj):
                        env.update({k: v for k, v in loaded.data.get("env", {}).items()
                                    if not k.startswith("_")})
                continue
            bound = alias.asname or alias.name
            if base in self.modules:
                loaded = self.load_module(base, node.lineno)
                env[bound] = loaded.data.get("env", {}).get(alias.name, Unknown(
                    f"{alias.name} is not defined in {base}", node.lineno)) \
                    if isinstance(loaded, Obj) else loaded
            elif f"{base}.{alias.name}" in self.modules:
                env[bound] = self.load_module(f"{base}.{alias.name}", node.lineno)
            else:
                env[bound] = import_value(f"{base}.{alias.name}")

    def load_module(self, name: str, line: int) -> Any:
        """An extra py file as a module: its functions, analysed when called."""
        if name in self.loaded:
            return Obj("usermodule", name, {"env": self.loaded[name]})
        if name not in self.modules:
            return import_value(name)
        label, text = self.modules[name]
        env: dict[str, Any] = predefined()
        env["__name__"] = name
        self.loaded[name] = env
        try:
            tree = ast.parse(text, filename=label)
        except (SyntaxError, ValueError) as exc:
            self.warn(f"extra py file {label} cannot be parsed: {exc}", line)
            return Obj("usermodule", name, {"env": env})
        saved = self.current_file
        self.current_file = label
        try:
            self.run_module(tree, env)
        finally:
            self.current_file = saved
        return Obj("usermodule", name, {"env": env})

    # -- expressions ----------------------------------------------------------------------------
    def lookup(self, name: str, env: dict[str, Any], line: int) -> Any:
        if name in env:
            return env[name]
        if name in self.globals:
            return self.globals[name]
        if self.star_functions:
            return Obj("func", name)
        if name in ("spark", "sc", "glueContext", "glue_context"):
            return Obj("spark") if name == "spark" else Obj("glue") \
                if name.startswith("glue") else Obj("sc")
        return _builtin(name) or Unknown(f"name {name}", line)

    def call_node(self, node: ast.Call, env: dict[str, Any]) -> Any:
        func = self.eval(node.func, env)
        args: list[Any] = []
        for arg in node.args:
            if isinstance(arg, ast.Starred):
                inner = self.iterate(self.eval(arg.value, env))
                if inner is None:
                    args.append(Unknown("*args", node.lineno))
                else:
                    args.extend(inner)
            else:
                args.append(self.eval(arg, env))
        kwargs: dict[str, Any] = {}
        for kw in node.keywords:
            value = self.eval(kw.value, env)
            if kw.arg is None:
                if isinstance(value, Obj) and value.kind == "args":  # f(**args)
                    value = {**self.arguments, **value.data.get("set", {})}
                if isinstance(value, dict):
                    kwargs.update({str(k): v for k, v in value.items()})
            else:
                kwargs[kw.arg] = value
        return self.call(func, args, kwargs, node.lineno, _callee_name(node.func))

    def call(self, func: Any, args: list[Any], kwargs: dict[str, Any], line: int,
             label: str) -> Any:
        if isinstance(func, UserFunc):
            return self.call_user(func, args, kwargs, line)
        if isinstance(func, Bound):
            owner = func.self_value.cls if isinstance(func.self_value, Instance) else \
                func.self_value
            defining = _defining_class(owner, func.func)
            self.classes.append((defining, func.self_value))
            try:
                return self.call(func.func, [func.self_value, *args], kwargs, line, label)
            finally:
                self.classes.pop()
        if label == "super" and self.classes and self.classes[-1][0] is not None:
            defining, self_value = self.classes[-1]
            return Obj("super", data={"after": defining, "self": self_value})
        if isinstance(func, UserClass):
            instance = Instance(func, {})
            init = func.methods.get("__init__")
            if init is not None:
                self.call(Bound(init, instance), list(args), kwargs, line, f"{func.name}()")
            return instance
        if isinstance(func, Lambda):
            local = _Scope({}, func.scope)
            for a, v in zip(func.node.args.args, args):
                local[a.arg] = v
            return self.eval(func.node.body, local)
        if isinstance(func, Method):
            return self.call_method(func.target, func.name, args, kwargs, line, label)
        if isinstance(func, Obj):
            return self.call_object(func, args, kwargs, line, label)
        if isinstance(func, ColExpr) and len(func.refs) == 1 and \
                isinstance(func.refs[0][0], Frame) and func.subtype == IDENTITY:
            # df.someMethod(...): a frame method the analyser does not model
            return self.frame_method(func.refs[0][0], func.refs[0][1], args, kwargs, line,
                                     label)
        if label == "getattr" and len(args) >= 2 and isinstance(args[1], str):
            # getattr(SqlFuncs, func) in Glue Studio's sparkAggregate
            return self.attribute(args[0], args[1], line)
        if callable(func) and getattr(func, "_lineage_builtin", False):
            if label in ("len", "bool") and args and id(args[0]) in self.uncertain:
                return Unknown(f"the length of a list filled at run time (line {line})", line)
            if label == "dict":  # dict(path=…), dict(base, key=…), dict([(k, v), …])
                return _dict_call(args, kwargs)
            return func(*args)
        return self.unknown_call(label, args, kwargs, line)

    def walk_frames(self, values: list[Any]) -> Iterator[Frame]:
        for v in values:
            if isinstance(v, Frame):
                yield v
            elif isinstance(v, (list, tuple)):
                yield from self.walk_frames(list(v))
            elif isinstance(v, dict):
                yield from self.walk_frames(list(v.values()))
            elif isinstance(v, Obj) and v.kind in ("rdd", "pandas", "rows") and \
                    isinstance(v.data.get("frame"), Frame):
                yield v.data["frame"]  # the rows of a frame, as an RDD, pandas or a list

    def unknown_call(self, label: str, args: list[Any], kwargs: dict[str, Any],
                     line: int) -> Any:
        if label.split(".")[-1] in ("as_completed", "wait") and args:
            futures = self.iterate(args[0])  # concurrent.futures: the same futures
            if futures is not None:
                return futures if label.endswith("as_completed") else (futures, [])
        if label.split(".")[-1] == "reduce" and len(args) >= 2:
            items = self.iterate(args[1])
            if len(args) >= 3 and isinstance(args[0], (UserFunc, Lambda)) and \
                    items is not None and isinstance(args[2], Frame):
                # reduce(lambda d, c: d.withColumn(c, …), names, df): a fold from df
                acc: Any = args[2]
                for item in items:
                    acc = self.call(args[0], [acc, item], {}, line, "reduce function")
                return acc
            if items and all(isinstance(v, Frame) for v in items):
                if not isinstance(args[0], (UserFunc, Lambda)):
                    return merge_frames(items)  # reduce(DataFrame.unionByName, frames)
                acc = items[0]
                for item in items[1:]:
                    acc = self.call(args[0], [acc, item], {}, line, "reduce function")
                return acc
        funcs = [i for i, a in enumerate(args) if isinstance(a, (UserFunc, Lambda))]
        if funcs and label.split(".")[-1] not in ("udf", "pandas_udf", "register"):
            # a script function handed to code the analyser does not know (a pool, a
            # retry helper, a callback): analysed as if called with the arguments after it
            i = funcs[0]
            name = args[i].node.name if isinstance(args[i], UserFunc) else "lambda"
            self.warn(f"{name} is passed to {label}(), which the analyser does not know; it "
                      "is analysed as if called with the arguments that follow it", line)
            result = self.call(args[i], list(args[i + 1:]), kwargs, line, name)
            return result if isinstance(result, Frame) else Unknown(f"result of {label}()",
                                                                   line)
        frames = list(self.walk_frames(args + list(kwargs.values())))
        if frames:
            self.warn(f"{label}() is not known to the analyser and receives a frame; lineage "
                      "through it is unknown", line)
            merged = merge_frames(frames)
            return Frame({k: c.__class__(tuple(e.__class__(e.dataset, e.field, e.type, "UNKNOWN",
                                                           f"through {label}()", line)
                                               for e in c.edges), c.type)
                          for k, c in merged.cols.items()},
                         merged.indirect, merged.open, {}, merged.dynamic,
                         f"result of unknown call {label}() at line {line}", merged.line,
                         f"through {label}()")
        exprs = [v for v in args + list(kwargs.values()) if isinstance(v, ColExpr)]
        if exprs:
            return combine_exprs(exprs, TRANSFORMATION, None)
        return Unknown(f"result of {label}()", line)


def _defining_class(owner: Any, method: Any) -> UserClass | None:
    """The script class whose body defines ``method`` (for ``super()`` inside it)."""
    if not isinstance(owner, UserClass) or not isinstance(method, UserFunc):
        return None
    name = method.node.name
    for cls in owner.mro():
        if name in cls.own and cls.methods.get(name) is method:
            return cls
    return None


def _callee_name(node: ast.expr) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        inner = _callee_name(node.value)
        return f"{inner}.{node.attr}" if inner else node.attr
    if isinstance(node, ast.Call):
        return _callee_name(node.func) + "(…)"
    return ""


def _dict_call(args: list[Any], kwargs: dict[str, Any]) -> Any:
    """``dict(...)`` of known values: a mapping, pairs, keywords (``dict(path=p)``, as Glue
    options are often written); an argument the analyser does not know makes it unknown."""
    base: dict[Any, Any] = {}
    if args:
        first = args[0]
        if isinstance(first, dict):
            base = dict(first)
        elif isinstance(first, (list, tuple)) and all(
                isinstance(p, (list, tuple)) and len(p) == 2 for p in first):
            base = {k: v for k, v in first}
        else:
            return Unknown("dict() of a value the analyser does not know")
    return {**base, **kwargs}


def _builtin(name: str) -> Any:
    funcs: dict[str, Any] = {
        "str": lambda *a: _as_text(a[0])[0] if a and isinstance(a[0], (str, int, float))
        else (a[0] if a and isinstance(a[0], DynStr) else
              Unknown(f"str({a[0].reason})" if a and isinstance(a[0], Unknown) else "str()")),
        "print": lambda *a: None,
        "len": lambda *a: len(a[0]) if a and isinstance(a[0], (list, tuple, dict, str))
        else Unknown("len()"),
        "list": lambda *a: list(a[0]) if a and isinstance(a[0], (list, tuple, dict))
        else ([] if not a else Unknown("list()")),
        "tuple": lambda *a: tuple(a[0]) if a and isinstance(a[0], (list, tuple))
        else Unknown("tuple()"),
        "dict": lambda *a: _dict_call(list(a), {}),
        "range": lambda *a: list(range(*a)) if all(isinstance(x, int) for x in a) and
        len(a) in (1, 2, 3) and (a[-1] if len(a) < 3 else a[1]) <= 1000 else Unknown("range()"),
        "enumerate": lambda *a: list(enumerate(a[0])) if a and isinstance(a[0], (list, tuple))
        else Unknown("enumerate()"),
        "zip": lambda *a: list(zip(*a)) if a and all(isinstance(x, (list, tuple)) for x in a)
        else Unknown("zip()"),
        "sorted": lambda *a: list(a[0]) if a and isinstance(a[0], (list, tuple))
        else Unknown("sorted()"),
    }
    func = funcs.get(name)
    if func is not None:
        func._lineage_builtin = True
    return func
