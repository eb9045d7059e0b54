"""Section 7: custom-op registrations the diff touches, and real impls that alias an input."""

import ast
import re

from .symbols import own_nodes
from .workspace import flag

REGISTRATION = re.compile(r"\b(direct_register_custom_op|custom_op)\b")
VIEW_METHODS = {"view", "view_as", "reshape", "transpose", "t", "permute", "expand", "expand_as", "narrow",
                "squeeze", "unsqueeze", "flatten", "unflatten", "as_strided", "detach", "select", "split",
                "chunk", "unbind", "movedim", "contiguous"}


def custom_ops(ws):
    """Registrations (direct_register_custom_op, @torch.library.custom_op) whose call or impl has added lines."""
    entries, flags = [], []
    added = {}
    for diff in ws.diffs:
        added.setdefault(diff.path, set()).update(number for number, _ in diff.added)
    for path in sorted(ws.head_trees):
        lines = added.get(path) or set()
        if not lines or not REGISTRATION.search(ws.head_texts[path]):
            continue
        tree = ws.head_trees[path]
        functions = {node.name: node for node in ast.walk(tree) if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))}
        for registration in _registrations(tree, functions):
            impl, fake = registration["impl"], registration["fake"]
            spans = [registration["node"]] + [n for n in (impl, fake) if n is not None]
            if not any(node.lineno <= n <= node.end_lineno for node in spans for n in lines):
                continue
            mutated = registration["mutates"]
            aliased = _returned_inputs(impl) if impl is not None else []
            undeclared = [name for name in aliased if mutated is None or name not in mutated]
            entry = {"path": path, "line": registration["node"].lineno, "op": registration["op"],
                     "impl": impl.name if impl is not None else None,
                     "mutates_args": sorted(mutated) if mutated is not None else "not a literal",
                     "fake_impl": fake.name if fake is not None else registration["fake_name"],
                     "returns_inputs": aliased}
            entries.append(entry)
            if undeclared and mutated is not None:
                flags.append(flag("OP-ALIASING", path, impl.lineno,
                                  f"{registration['op']}: {impl.name} returns its input {', '.join(undeclared)} (or a "
                                  "view of it) while mutates_args does not name it; torch.compile rejects outputs "
                                  "that alias inputs"))
    return entries, flags


def _registrations(tree, functions):
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and _callee(node.func) == "direct_register_custom_op":
            args = {"op_name": node.args[0] if node.args else None, "op_func": node.args[1] if len(node.args) > 1 else None}
            args.update({kw.arg: kw.value for kw in node.keywords if kw.arg})
            impl_name = _name(args.get("op_func"))
            fake_name = _name(args.get("fake_impl"))
            yield {"node": node, "op": _literal_text(args.get("op_name")), "impl": functions.get(impl_name),
                   "fake": functions.get(fake_name), "fake_name": fake_name,
                   "mutates": _mutates(args.get("mutates_args"))}
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for decorator in node.decorator_list:
                if isinstance(decorator, ast.Call) and _callee(decorator.func) == "custom_op":
                    keywords = {kw.arg: kw.value for kw in decorator.keywords if kw.arg}
                    op = decorator.args[0] if decorator.args else keywords.get("name")
                    yield {"node": node, "op": _literal_text(op), "impl": node, "fake": None, "fake_name": None,
                           "mutates": _mutates(keywords.get("mutates_args"))}


def _callee(func):
    return func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else None


def _name(node):
    return node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute) else None


def _literal_text(node):
    if isinstance(node, ast.Constant):
        return str(node.value)
    return ast.unparse(node) if node is not None else None


def _mutates(node):
    """Declared mutated argument names; an absent or None value means none; None when not a literal."""
    if node is None or (isinstance(node, ast.Constant) and node.value is None):
        return set()
    try:
        value = ast.literal_eval(node)
    except ValueError:
        return None
    if isinstance(value, str):
        return {value}
    return {item for item in value if isinstance(item, str)} if isinstance(value, (list, tuple, set)) else None


def _returned_inputs(function):
    """Parameters the function returns as they are, or as a view of themselves.

    A parameter rebound before the return to anything but a view of an input (``x = torch.empty_like(x)``,
    ``x = x * 2``) names a fresh tensor there, not the input.
    """
    params = {arg.arg for arg in function.args.args + function.args.kwonlyargs + function.args.posonlyargs}
    nodes = list(own_nodes(function))
    rebound = {}
    for node in nodes:
        for target, value in _bindings(node):
            if target in params:
                rebound.setdefault(target, []).append((node.lineno, value is not None and bool(_aliased(value, params))))
    found = set()
    for node in nodes:
        if isinstance(node, ast.Return) and node.value is not None:
            for name in _aliased(node.value, params):
                earlier = sorted(binding for binding in rebound.get(name, []) if binding[0] < node.lineno)
                if not earlier or earlier[-1][1]:
                    found.add(name)
    return sorted(found)


def _bindings(node):
    """(name, value or None) for each plain name ``node`` rebinds; None when the value is not known
    (tuple unpacking, loop target, with-as). ``x += y`` is in place: it keeps the input, so it is no rebinding."""
    if isinstance(node, ast.Assign):
        for target in node.targets:
            if isinstance(target, ast.Name):
                yield target.id, node.value
            else:
                yield from ((name.id, None) for name in ast.walk(target) if isinstance(name, ast.Name))
    elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.value is not None:
        yield node.target.id, node.value
    elif isinstance(node, (ast.For, ast.AsyncFor)):
        yield from ((name.id, None) for name in ast.walk(node.target) if isinstance(name, ast.Name))
    elif isinstance(node, (ast.With, ast.AsyncWith)):
        yield from ((name.id, None) for item in node.items if item.optional_vars is not None
                    for name in ast.walk(item.optional_vars) if isinstance(name, ast.Name))



def _aliased(expr, params):
    if isinstance(expr, ast.Name):
        return {expr.id} if expr.id in params else set()
    if isinstance(expr, (ast.Tuple, ast.List)):
        return set().union(*(_aliased(item, params) for item in expr.elts)) if expr.elts else set()
    if isinstance(expr, ast.Subscript):
        return _aliased(expr.value, params)
    if isinstance(expr, ast.Call) and isinstance(expr.func, ast.Attribute) and expr.func.attr in VIEW_METHODS:
        return _aliased(expr.func.value, params)
    return set()
