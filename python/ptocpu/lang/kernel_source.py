"""What PyPTO's kernel front end refuses in a jit kernel's source, refused alike on the CPU (a
kernel that runs on ptocpu then also compiles). Checked once per kernel, at its first call after
its arguments (docs/kernel_model.md#what-a-kernel-may-contain).

PyPTO has two front ends, chosen by jit's `new_ir` (default True):
- the IR pipeline (new_ir=True) refuses *args / **kwargs parameters, a `return` in the kernel,
  `break` / `continue` / `return` inside a `pypto.loop` body, `for`-`else` / `while`-`else`, and
  statements it has no rule for (with, try, import, global, class, ...): "Unsupported syntax";
- the parser (new_ir=False) refuses *args / **kwargs, any `return`, every statement but
  assignments, calls, for, if, assert, del and pass (so break, continue, while, raise too),
  `for`-`else`, and rebinding a tensor parameter's name (write into it with `x[:] = ...` or
  `x.move(...)`).
Functions defined inside a kernel are helpers: their bodies are not checked here.

The parser also evaluates the kernel statement by statement: an error raised while a new_ir=False
kernel runs is reported at the statement that raised it (`located`), as PyPTO's parser reports it.
"""
from __future__ import annotations

import ast
import inspect
import textwrap
from typing import Callable, Optional

from ..error import ParserError, PyptoGeneralError, as_fe_error

__all__ = ["refusal", "located"]

_PARSER_STATEMENTS = (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Expr, ast.For, ast.If, ast.Assert, ast.Delete,
                      ast.Pass, ast.FunctionDef)
_IR_STATEMENTS = _PARSER_STATEMENTS + (ast.Break, ast.Continue, ast.While, ast.Raise, ast.Return)


def _where(func: Callable, node) -> str:
    line = getattr(node, "lineno", None) or func.__code__.co_firstlineno
    return f"{func.__code__.co_filename}:{line}"


def _is_pypto_loop(node: ast.For) -> bool:
    """`for i in pypto.loop(...)` / `pypto.loop_unroll(...)`: a loop of the device program."""
    call = node.iter
    return (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute)
            and isinstance(call.func.value, ast.Name) and call.func.value.id == "pypto"
            and call.func.attr in ("loop", "loop_unroll"))


def _walk(body: list, in_device_loop: bool = False, innermost_device: bool = False):
    """(statement, inside a pypto.loop, the innermost loop is a pypto.loop) in source order,
    without the bodies of functions defined in the kernel."""
    for stmt in body:
        yield stmt, in_device_loop, innermost_device
        if isinstance(stmt, ast.FunctionDef):
            continue
        if isinstance(stmt, (ast.For, ast.While)):
            device = isinstance(stmt, ast.For) and _is_pypto_loop(stmt)
            yield from _walk(stmt.body, in_device_loop or device, device)
            yield from _walk(stmt.orelse, in_device_loop, innermost_device)
            continue
        for field in ("body", "orelse", "finalbody", "handlers"):
            yield from _walk(getattr(stmt, field, []) or [], in_device_loop, innermost_device)


def _bound_names(target: ast.AST):
    """The names an assignment target rebinds (not those it subscripts: x[:] = ... writes x)."""
    if isinstance(target, ast.Name):
        yield target
    elif isinstance(target, (ast.Tuple, ast.List)):
        for element in target.elts:
            yield from _bound_names(element)
    elif isinstance(target, ast.Starred):
        yield from _bound_names(target.value)


def _kernel_ast(func: Callable) -> Optional[ast.FunctionDef]:
    try:
        source = inspect.getsource(inspect.unwrap(func))
        tree = ast.parse(textwrap.dedent(source))
    except (OSError, TypeError, SyntaxError):
        return None  # no source to read (made by exec, a builtin): nothing to refuse
    ast.increment_lineno(tree, func.__code__.co_firstlineno - 1)
    indent = len(source) - len(source.lstrip(" \t"))  # what dedent took off every line: columns as in the file
    for node in ast.walk(tree):
        if hasattr(node, "col_offset"):
            node.col_offset += indent
            if getattr(node, "end_col_offset", None) is not None:
                node.end_col_offset += indent
    return next((n for n in tree.body if isinstance(n, ast.FunctionDef)), None)


def _ir_refusal(func: Callable, signature: inspect.Signature, name: str) -> Optional[BaseException]:
    def refused(node, what: str) -> BaseException:
        return PyptoGeneralError(SyntaxError(f"Failed to compile function '{name}'.\nUnsupported syntax "
                                             f"{type(node)}: {what} ({_where(func, node)})"))

    kernel = _kernel_ast(func)
    if any(p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD) for p in signature.parameters.values()):
        return refused(kernel or func, "vararg and kwarg not supported: give each argument its own parameter")
    for stmt, in_device_loop, innermost_device in _walk(kernel.body if kernel else []):
        if not isinstance(stmt, _IR_STATEMENTS):
            return refused(stmt, "no rule for this statement in a kernel")
        if isinstance(stmt, ast.Return):
            return refused(stmt, "return is not supported in pypto.loop" if in_device_loop else
                           "return statement in entry point: write results into an out parameter")
        if isinstance(stmt, (ast.Break, ast.Continue)) and innermost_device:
            return refused(stmt, f"{type(stmt).__name__.lower()} is not supported in pypto.loop")
        if isinstance(stmt, (ast.For, ast.While)) and stmt.orelse:
            return refused(stmt, f"{type(stmt).__name__.lower()}-else not supported")
    return None


def _parser_refusal(func: Callable, signature: inspect.Signature, is_tensor: Callable) -> Optional[BaseException]:
    def refused(node, error: BaseException) -> ParserError:
        return ParserError(node, type(error)(f"{error} ({_where(func, node)})"))

    kernel = _kernel_ast(func)
    for param in signature.parameters.values():
        node = kernel or func  # the node PyPTO's ParserError points at
        if param.kind is param.VAR_POSITIONAL:
            return refused(node, NotImplementedError(f"Variable-length arguments (*{param.name}) are not supported "
                                                     f"in a kernel: give each argument its own parameter"))
        if param.kind is param.VAR_KEYWORD:
            return refused(node, NotImplementedError(f"Keyword argument packing (**{param.name}) is not supported "
                                                     f"in a kernel: name each keyword parameter"))
    statements = [stmt for stmt, _, _ in _walk(kernel.body if kernel else [])]
    for stmt in statements:
        if isinstance(stmt, ast.Return):
            return refused(stmt, ValueError("Return statements are not allowed in a kernel. Use an out parameter "
                                            "and out.move(...) (or out[:] = ...) to write results instead."))
    tensors = {p.name for p in signature.parameters.values() if is_tensor(p.annotation)}
    for stmt in statements:
        if not isinstance(stmt, _PARSER_STATEMENTS):
            return refused(stmt, NotImplementedError(f"{type(stmt).__name__} is not supported by the PTO parser: a "
                                                     f"kernel's statements are assignments, calls, for, if, assert, "
                                                     f"del and pass"))
        if isinstance(stmt, ast.For) and stmt.orelse:
            return refused(stmt, NotImplementedError("For-else clauses are not supported in a kernel: test after "
                                                     "the loop instead"))
        targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target] if isinstance(stmt, ast.AnnAssign) else []
        for node in (n for target in targets for n in _bound_names(target)):
            if node.id in tensors:
                return refused(node, ValueError(f"Input tensor '{node.id}' cannot be reassigned. Write into it with "
                                                f"'{node.id}[:] = ...' or '{node.id}.move(...)' instead."))
    return None


def refusal(func: Callable, signature: inspect.Signature, name: str, new_ir: bool,
            is_tensor: Callable) -> Optional[BaseException]:
    """The error PyPTO's front end (chosen by new_ir) raises for this kernel's source, or None.
    is_tensor(annotation) tells the tensor parameters."""
    if new_ir:
        return _ir_refusal(func, signature, name)
    return _parser_refusal(func, signature, is_tensor)


_CONTEXT_LINES = 2  # source lines shown before and after the one that failed


def _statement_at(kernel: ast.FunctionDef, line: int) -> Optional[ast.AST]:
    """The innermost statement of the kernel spanning `line` (an expression statement: its
    expression, the node PyPTO's evaluator names)."""
    found = None
    for stmt, _, _ in _walk(kernel.body):
        if stmt.lineno <= line <= (stmt.end_lineno or stmt.lineno):
            found = stmt
    return found.value if isinstance(found, ast.Expr) else found


def _render(path: str, node: ast.AST, message: str) -> str:
    """"error: file:line:col: message", the lines around it and carets under the failing part."""
    try:
        with open(path, encoding="utf-8") as source:
            lines = source.read().splitlines()
    except OSError:
        lines = []
    first, last = node.lineno, node.end_lineno or node.lineno
    shown = range(max(1, first - _CONTEXT_LINES), min(len(lines), last + _CONTEXT_LINES) + 1)
    width = len(str(shown.stop))
    out = [f"error: {path}:{first}:{node.col_offset + 1}: {message}"]
    for number in shown:
        text = lines[number - 1]
        out.append(f"{str(number).rjust(width)} | {text}")
        if first <= number <= last:
            start = node.col_offset if number == first else len(text) - len(text.lstrip())
            end = (node.end_col_offset or len(text)) if number == last else len(text)
            out.append(" " * (width + 3 + start) + "^" * max(1, end - start))
    return "\n".join(out) + "\n"


def located(func: Callable, error: BaseException) -> Optional[BaseException]:
    """`error`, raised while the new_ir=False kernel `func` ran, as PyPTO's parser reports it: the
    source of the statement that raised it printed with carets, and a ParserError (also of error's
    own class) whose `node` is that statement. None when no statement of func raised it."""
    if not isinstance(error, Exception) or isinstance(error, ParserError):
        return None
    code = inspect.unwrap(func).__code__
    line = None
    tb = error.__traceback__
    while tb is not None:  # the innermost call of the kernel's own code
        if tb.tb_frame.f_code is code:
            line = tb.tb_lineno
        tb = tb.tb_next
    kernel = _kernel_ast(func) if line is not None else None
    node = _statement_at(kernel, line) if kernel is not None else None
    if node is None:
        return None
    print(_render(code.co_filename, node, f"{type(error).__name__}: {error}"))
    converted = as_fe_error(error, ParserError)
    if converted is error:  # a class that cannot be combined
        converted = ParserError(node, error)
    converted.node = node
    return converted
