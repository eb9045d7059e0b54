"""Section 8: copies and allocations the diff adds on the forward path, and empty_like buffers summed into."""

import ast
import re

from . import symbols as sym
from .workspace import flag
from .workspace import is_product_code

COPY = re.compile(r"(?P<target>[\w.\[\]]*\w[\])]?)\.(?P<op>contiguous|clone)\(\)|(?P<moved>[\w.\[\]]*\w[\])]?)\.to\("
                  r"|torch\.(?P<alloc>empty\w*|zeros\w*)\(")
EMPTY_LIKE = re.compile(r"(?P<var>\w+)\s*=\s*torch\.empty_like\(")


def hot_path_copies(ws):
    """Added copies in functions reached from a hot entry point, and empty_like results fed to sums."""
    hot = re.compile(ws.settings["hot_entry"])
    accumulators = re.compile(ws.settings["accumulator_names"])
    entries, flags = [], []
    for diff in ws.diffs:
        if not is_product_code(diff.path) or diff.path not in ws.head_trees:
            continue
        defs = [d for d in ws.head_defs[diff.path] if d.kind == "function"]
        reached = _reached(ws.head_trees[diff.path], hot)
        lines = ws.head_texts[diff.path].split("\n")
        for number, text in diff.added:
            if diff.is_comment(text):
                continue
            masked, comment = diff.mask_strings(text)
            function = sym.innermost(defs, number)
            if function is None:
                continue
            buffer = EMPTY_LIKE.search(masked[:comment])
            use = _accumulating_use(buffer.group("var"), lines[number:function.end], accumulators) if buffer else None
            for match in COPY.finditer(masked[:comment]):
                if function.name not in reached or (use and match.group("alloc") == "empty_like"):
                    continue
                target = match.group("target") or match.group("moved")
                op = match.group("op") or ("to" if match.group("moved") else match.group("alloc"))
                role = ("weight" if target and re.search(r"weight|(^|\.)w\d*(_|$)", target)
                        else "activation" if target else "new buffer")
                entries.append({"path": diff.path, "line": number, "function": function.qualname, "op": op,
                                "tensor": target, "role": role})
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
