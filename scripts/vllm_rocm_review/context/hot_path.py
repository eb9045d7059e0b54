"""Section 8: copies and allocations the diff adds on the forward path, and empty_like buffers summed into.

Only copies (``.contiguous()``, ``.clone()``, ``.to(``) and zero-filled allocations are flagged: an
uninitialised ``torch.empty`` output buffer is what every kernel wrapper makes and costs no pass over
memory, so it is listed, not flagged. A file the PR adds has no forward path to slow down. Lines the diff only moves (the same statement is removed in
the file), fake implementations (shape functions for torch.compile, never run on data) and
``.contiguous()`` of a tensor the function has just computed (already contiguous, a no-op) are skipped.
"""

import ast
import re

from . import symbols as sym
from .workspace import flag
from .workspace import is_product_code

COPY = re.compile(r"(?P<target>[\w.\[\]]*\w[\])]?)\.(?P<op>contiguous|clone)\(\)|(?P<moved>[\w.\[\]]*\w[\])]?)\.to\("
                  r"|torch\.(?P<alloc>empty\w*|zeros\w*)\(")
EMPTY_LIKE = re.compile(r"(?P<var>\w+)\s*=\s*torch\.empty_like\(")
FAKE_DECORATORS = {"register_fake", "impl_abstract", "register_meta"}
# Tensor methods returning a view of their input: .contiguous() after one of them really copies.
VIEW_METHODS = {"view", "view_as", "reshape", "transpose", "t", "permute", "expand", "expand_as", "narrow",
                "squeeze", "unsqueeze", "flatten", "unflatten", "as_strided", "select", "split", "chunk",
                "unbind", "movedim", "T", "mT", "swapaxes", "diagonal", "__getitem__"}


def hot_path_copies(ws):
    """Added copies in functions reached from a hot entry point, and empty_like results fed to sums."""
    hot = re.compile(ws.settings["hot_entry"])
    accumulators = re.compile(ws.settings["accumulator_names"])
    entries, flags = [], []
    for diff in ws.diffs:
        if not is_product_code(diff.path) or diff.path not in ws.head_trees or diff.status == "added":
            continue
        defs = [d for d in ws.head_defs[diff.path] if d.kind == "function"]
        tree = ws.head_trees[diff.path]
        reached = _reached(tree, hot)
        fakes = _fake_functions(tree)
        contiguous = _contiguous_sources(tree)
        removed = {line.strip() for _, line in diff.removed}
        lines = ws.head_texts[diff.path].split("\n")
        for number, text in diff.added:
            if diff.is_comment(text) or text.strip() in removed:
                continue
            masked, comment = diff.mask_strings(text)
            function = sym.innermost(defs, number)
            if function is None or function.name in fakes:
                continue
            buffer = EMPTY_LIKE.search(masked[:comment])
            use = _accumulating_use(buffer.group("var"), lines[number:function.end], accumulators) if buffer else None
            for match in COPY.finditer(masked[:comment]):
                if function.name not in reached or (use and match.group("alloc") == "empty_like"):
                    continue
                target = match.group("target") or match.group("moved")
                op = match.group("op") or ("to" if match.group("moved") else match.group("alloc"))
                if op == "contiguous" and number in contiguous:
                    fresh, target = contiguous[number]
                    if fresh:
                        continue
                role = ("weight" if target and re.search(r"weight|(^|\.)w\d*(_|$)", target)
                        else "activation" if target else "new buffer")
                entries.append({"path": diff.path, "line": number, "function": function.qualname, "op": op,
                                "tensor": target, "role": role})
                if not op.startswith("empty"):
                    flags.append(flag("HOT-PATH-COPY", diff.path, number,
                                      f"{op} on {target or 'a new tensor'} ({role}) added in {function.qualname}, "
                                      "which the forward path reaches"))
            if use:
                entries.append({"path": diff.path, "line": number, "function": function.qualname,
                                "op": "empty_like", "tensor": buffer.group("var"), "role": "accumulator"})
                flags.append(flag("HOT-PATH-COPY", diff.path, number,
                                  f"torch.empty_like result {buffer.group('var')} is uninitialised but feeds "
                                  f"`{use.strip()[:80]}`"))
    return entries, flags


def _fake_functions(tree):
    """Names of the module's fake (meta) implementations: ``*_fake``/``fake_*`` functions, those
    registered with a fake decorator, and those passed as ``fake_impl``."""
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            decorators = {_called_name(d.func if isinstance(d, ast.Call) else d) for d in node.decorator_list}
            if node.name.endswith("_fake") or node.name.startswith("fake_") or decorators & FAKE_DECORATORS:
                names.add(node.name)
        elif isinstance(node, ast.keyword) and node.arg == "fake_impl":
            names.add(_called_name(node.value))
    return names


def _called_name(node):
    return node.attr if isinstance(node, ast.Attribute) else getattr(node, "id", None)


def _contiguous_sources(tree):
    """{line: (fresh, source text)} of each ``X.contiguous()``; fresh when X is a call that is not a
    view method, or a name its function last assigned from such a call."""
    found = {}
    for function in ast.walk(tree):
        if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        assigned = {}
        for node in ast.walk(function):
            if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
                assigned.setdefault(node.targets[0].id, []).append((node.lineno, _is_fresh(node.value)))
        for node in ast.walk(function):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                    and node.func.attr == "contiguous"):
                continue
            source = node.func.value
            if isinstance(source, ast.Name):
                earlier = sorted(binding for binding in assigned.get(source.id, []) if binding[0] < node.lineno)
                fresh = bool(earlier) and earlier[-1][1]
            else:
                fresh = _is_fresh(source)
            text = ast.unparse(source)
            found[node.lineno] = (fresh, text if len(text) <= 60 else text[:59] + "…")
    return found


def _is_fresh(expr):
    """A call producing a new tensor: not a view method, not a subscript, not a plain name."""
    if not isinstance(expr, (ast.Call, ast.BinOp)):
        return False
    if isinstance(expr, ast.Call) and isinstance(expr.func, ast.Attribute) and expr.func.attr in VIEW_METHODS:
        return False
    return True


def _reached(tree, hot):
    """Names of the module's hot entry functions and of what they call (one level)."""
    reached = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and hot.match(node.name):
            reached.add(node.name)
            for call in ast.walk(node):
                if isinstance(call, ast.Call):
                    func = call.func
                    name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
                    if name:
                        reached.add(name)
    return reached


def _accumulating_use(var, body, accumulators):
    """The first line summing into ``var`` or passing it as a residual/bias/accumulator, or None."""
    word = re.escape(var)
    summed = re.compile(rf"\b{word}\s*\+|\+\s*{word}\b|\b{word}\.add_?\(|\b{word}\s*\+=")
    passed = re.compile(rf"\b(?P<kw>\w+)\s*=\s*{word}\b")
    named = accumulators.search(var)
    for line in body:
        if summed.search(line):
            return line
        keyword = passed.search(line)
        if keyword and accumulators.search(keyword.group("kw")):
            return line
        if named and re.search(rf"\b{word}\b", line):
            return line
    return None
