"""Section 9: hazards on the lines the PR adds, one detector per flag code.

Each detector looks only at added lines and fires only on a shape it can show from the code (no
guessing at runtime values): precision over recall, since a flag the reader learns to skip costs
more than the hazard it misses. The facts (platform modules, the stream helper, the CMake guard
that makes a source CUDA-only) live in ``context_pack.hazards`` of rocm-surface.yaml.
"""

import ast
import re

from .symbols import own_nodes
from .workspace import flag
from .workspace import is_product_code
from .workspace import matches_any

FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)


def hazards(ws):
    """[flags] of every detector, in file order."""
    settings = ws.settings["hazards"]
    flags = []
    for diff in ws.diffs:
        added = {number for number, _ in diff.added}
        if not added:
            continue
        if is_product_code(diff.path) and diff.path in ws.head_trees:
            tree = ws.head_trees[diff.path]
            moved = {text.strip() for _, text in diff.removed}
            fresh = {n for n, text in diff.added if text.strip() and text.strip() not in moved}
            flags += optional_dereferences(diff.path, tree, fresh)
            flags += widened_guards(diff, tree, settings)
            flags += platform_imports(diff.path, tree, added, settings)
            flags += nested_caches(diff.path, tree, added, settings)
            flags += raw_streams(diff, settings)
        if matches_any(diff.path, settings["ci_files"]):
            flags += commented_commands(diff, settings)
    if ws.searchable:
        flags += dropped_rocm_sources(ws, settings)
    return flags


# --- (a) OPTIONAL-DEREF ------------------------------------------------------------------------


def optional_dereferences(path, tree, lines):
    """``x.attr.y`` (or ``x.attr[...]``, ``x.attr(...)``) on an added line, where the module checks
    ``x.attr`` against None in another function and this one neither checks nor assigns it."""
    checked = {}
    for node in ast.walk(tree):
        for text in _none_checked(node):
            checked.setdefault(text, node.lineno)
    if not checked:
        return []
    flags, seen = [], set()
    for function in _functions_holding(tree, lines):
        local = {text for node in ast.walk(function) for text in _none_checked(node) | _truth_tested(node)}
        local |= {ast.unparse(target) for node in ast.walk(function) if isinstance(node, (ast.Assign, ast.AnnAssign))
                  for target in (node.targets if isinstance(node, ast.Assign) else [node.target])}
        for node in own_nodes(function):
            base = _dereferenced(node)
            if base is None or node.lineno not in lines:
                continue
            text = ast.unparse(base)
            where = checked.get(text)
            if where is None or text in local or (where >= function.lineno and where <= function.end_lineno):
                continue
            if (text, node.lineno) not in seen:
                seen.add((text, node.lineno))
                flags.append(flag("OPTIONAL-DEREF", path, node.lineno,
                                  f"{text} is checked against None at line {where} of this module, but "
                                  f"{function.name} dereferences it with no check"))
    return flags


def _none_checked(node):
    """Attribute texts ``node`` compares with None (``x.a is None``, ``x.a is not None``)."""
    if isinstance(node, ast.Compare) and len(node.ops) == 1 and isinstance(node.ops[0], (ast.Is, ast.IsNot)):
        sides = [node.left, node.comparators[0]]
        if any(isinstance(side, ast.Constant) and side.value is None for side in sides):
            return {ast.unparse(side) for side in sides if isinstance(side, ast.Attribute)}
    return set()


def _truth_tested(node):
    """Attribute texts tested for truth (``if x.a:``, ``x.a and ...``, ``assert x.a``)."""
    tests = []
    if isinstance(node, (ast.If, ast.While, ast.IfExp, ast.Assert)):
        tests = [node.test]
    elif isinstance(node, ast.BoolOp):
        tests = node.values
    found = set()
    for test in tests:
        test = test.operand if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not) else test
        if isinstance(test, ast.Attribute):
            found.add(ast.unparse(test))
    return found


def _dereferenced(node):
    """The Attribute that ``node`` dereferences (``base.y``, ``base[...]``, ``base(...)``), or None."""
    if isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Load):
        base = node.value
    elif isinstance(node, ast.Subscript):
        base = node.value
    elif isinstance(node, ast.Call):
        base = node.func
    else:
        return None
    return base if isinstance(base, ast.Attribute) else None


def _functions_holding(tree, lines):
    """The innermost functions holding any of ``lines``."""
    holders = {}
    for node in ast.walk(tree):
        if isinstance(node, FUNCTIONS):
            for line in lines:
                if node.lineno <= line <= node.end_lineno:
                    current = holders.get(line)
                    if current is None or node.lineno >= current.lineno:
                        holders[line] = node
    return list({id(node): node for node in holders.values()}.values())


# --- (b) GUARD-WIDENED -------------------------------------------------------------------------


def widened_guards(diff, tree, settings):
    """A guard widened on an added line (``is_cuda()`` → ``is_cuda_alike()``) around code that uses a
    module-level name still built only under the narrower guard."""
    flags = []
    for wide, narrower in settings["widened_guards"].items():
        removed = [n for n, text in diff.removed if any(re.search(rf"\.{name}\(\)", text) for name in narrower)]
        widened = [n for n, text in diff.added if re.search(rf"\.{wide}\(\)", text)]
        if not removed or not widened:
            continue
        tables = _narrow_tables(tree, wide, narrower)
        for line in widened:
            scope = _scope_at(tree, line)
            used = sorted({node.id for node in ast.walk(scope) if isinstance(node, ast.Name)
                           and isinstance(node.ctx, ast.Load) and node.id in tables})
            if used:
                name = used[0]
                flags.append(flag("GUARD-WIDENED", diff.path, line,
                                  f"the guard is widened to {wide}() here, but {name} (used below) is only built "
                                  f"under the narrower guard at line {tables[name]}"))
    return flags


def _narrow_tables(tree, wide, narrower):
    """{name: line} bound at module level only inside ``if ...<narrower>():`` with no else binding it."""
    tables = {}
    for node in tree.body:
        if not isinstance(node, ast.If):
            continue
        test = ast.unparse(node.test)
        if f".{wide}(" in test or not any(re.search(rf"\.{name}\(\)", test) for name in narrower):
            continue
        otherwise = {name for child in node.orelse for name in _bound(child)}
        for child in node.body:
            for name in _bound(child) - otherwise:
                tables.setdefault(name, child.lineno)
    return tables


def _bound(node):
    if isinstance(node, (*FUNCTIONS, ast.ClassDef)):
        return {node.name}
    if isinstance(node, (ast.Import, ast.ImportFrom)):
        return {(alias.asname or alias.name).split(".")[0] for alias in node.names}
    if isinstance(node, (ast.Assign, ast.AnnAssign)):
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        return {name.id for target in targets for name in ast.walk(target) if isinstance(name, ast.Name)}
    return set()


def _scope_at(tree, line):
    """The innermost function holding ``line``, else the module-level statement holding it."""
    holders = [node for node in ast.walk(tree) if isinstance(node, FUNCTIONS) and node.lineno <= line <= node.end_lineno]
    if holders:
        return max(holders, key=lambda node: node.lineno)
    return next((node for node in tree.body if node.lineno <= line <= node.end_lineno), tree)


# --- (c) PLATFORM-IMPORT -----------------------------------------------------------------------


def platform_imports(path, tree, lines, settings):
    """A module-level import of a platform module (vllm.platforms.rocm) added to platform-neutral code."""
    if matches_any(path, settings["platform_specific_paths"]):
        return []
    modules = set(settings["platform_modules"])
    flags = []
    for node in tree.body:
        if node.lineno not in lines or not isinstance(node, (ast.Import, ast.ImportFrom)):
            continue
        names = ([alias.name for alias in node.names] if isinstance(node, ast.Import)
                 else [node.module or ""] + [f"{node.module}.{alias.name}" for alias in node.names])
        hit = next((name for name in names if name in modules), None)
        if hit:
            flags.append(flag("PLATFORM-IMPORT", path, node.lineno,
                              f"{hit} is imported at module level in platform-neutral code: every platform "
                              "loads it; import it inside the branch that checks the platform"))
    return flags


# --- (d) NESTED-CACHE --------------------------------------------------------------------------


def nested_caches(path, tree, lines, settings):
    """``functools.lru_cache``/``cache`` on a function defined inside another function."""
    decorators = set(settings["cache_decorators"])
    flags = []
    for outer in ast.walk(tree):
        if not isinstance(outer, FUNCTIONS):
            continue
        for inner in own_nodes(outer):
            if not isinstance(inner, FUNCTIONS):
                continue
            for decorator in inner.decorator_list:
                name = _decorator_name(decorator)
                if name in decorators and (decorator.lineno in lines or inner.lineno in lines):
                    flags.append(flag("NESTED-CACHE", path, decorator.lineno,
                                      f"@{name} on {inner.name}, defined inside {outer.name}: each call of "
                                      f"{outer.name} makes a new, empty cache"))
    return flags


def _decorator_name(node):
    node = node.func if isinstance(node, ast.Call) else node
    return node.attr if isinstance(node, ast.Attribute) else getattr(node, "id", None)


# --- (f) RAW-CUDA-STREAM -----------------------------------------------------------------------


def raw_streams(diff, settings):
    """``torch.cuda.current_stream()`` added where vLLM's stream helper must be used."""
    stream = settings["stream"]
    if diff.path in stream["helper_modules"]:
        return []
    call = re.compile(re.escape(stream["call"]) + r"\(")
    return [flag("RAW-CUDA-STREAM", diff.path, number,
                 f"{stream['call']}() builds a new stream object on every call; vLLM's {stream['helper']}() "
                 "returns the tracked current stream without that cost and is meant to replace it")
            for number, text in diff.added if not diff.is_comment(text) and diff.code_match(call, text)]


# --- (g) CI-COMMENTED-COMMAND ------------------------------------------------------------------


def commented_commands(diff, settings):
    """A command added to CI YAML as a comment: the step silently stops running it."""
    pattern = re.compile(settings["commented_command"])
    return [flag("CI-COMMENTED-COMMAND", diff.path, number,
                 f"`{text.strip()[:80]}` is commented out: the step no longer runs it; delete it or say why")
            for number, text in diff.added if pattern.match(text)]


# --- (h) CSRC-ROCM-DROPPED ---------------------------------------------------------------------


def dropped_rocm_sources(ws, settings):
    """A csrc source moved in CMake from a list ROCm builds into a CUDA-only block while a
    torch_bindings.cpp still registers one of its functions outside ``#ifndef USE_ROCM``."""
    cmake = next((diff for diff in ws.diffs if diff.path == settings["cmake_file"]), None)
    if cmake is None or ws.base is None:
        return []
    source = re.compile(r"(?P<path>csrc/[\w./-]+\.(?:cu|cpp|cc|hip))")
    cuda_only = re.compile(settings["cuda_only_guard"])
    base_text = ws.reader.read(ws.base, cmake.old_path or cmake.path) or ""
    head_text = ws.reader.read(ws.head, cmake.path) or ""
    base_cuda, head_cuda = _cuda_only_lines(base_text, cuda_only), _cuda_only_lines(head_text, cuda_only)
    left = {m.group("path"): number for number, text in cmake.removed for m in source.finditer(text)
            if number not in base_cuda}
    moved = [(m.group("path"), number) for number, text in cmake.added for m in source.finditer(text)
             if number in head_cuda and m.group("path") in left]
    if not moved:
        return []
    bindings = [p for p in ws.head_paths() if p.startswith("csrc/") and p.endswith("/" + settings["bindings_file"])
                or p == "csrc/" + settings["bindings_file"]]
    texts = ws.reader.read_many(ws.head, bindings + [path for path, _ in moved])
    flags = []
    for path, number in moved:
        kernel = texts.get(path) or ""
        for binding in bindings:
            hit = _registered_from(texts.get(binding) or "", kernel)
            if hit:
                name, line = hit
                flags.append(flag("CSRC-ROCM-DROPPED", settings["cmake_file"], number,
                                  f"{path} moves into a CUDA-only source block, but {binding}:{line} still "
                                  f"registers {name} for ROCm builds: the ROCm extension loses the symbol"))
                break
    return flags


def _cuda_only_lines(text, cuda_only):
    """Line numbers inside a CMake ``if(...)`` branch that only CUDA builds take."""
    stack, lines = [], set()
    for number, line in enumerate(text.split("\n"), 1):
        stripped = line.strip().lower()
        if stripped.startswith("if(") or stripped.startswith("if ("):
            stack.append(bool(cuda_only.search(line)))
        elif stripped.startswith(("elseif(", "elseif (")) and stack:
            stack[-1] = bool(cuda_only.search(line))
        elif stripped.startswith(("else(", "else (")) and stack:
            stack[-1] = False
        elif stripped.startswith(("endif(", "endif (")) and stack:
            stack.pop()
            continue
        if any(stack):
            lines.add(number)
    return lines


def _registered_from(bindings, kernel):
    """(function, line) of the first ``&function`` the bindings register outside ``#ifndef USE_ROCM``
    that ``kernel`` defines at its top level, or None."""
    defined = set(re.findall(r"^(?:[\w:<>]+[\s*&]+)+(\w+)\s*\(", kernel, re.M))
    skip = []
    for number, line in enumerate(bindings.split("\n"), 1):
        stripped = line.strip()
        if stripped.startswith("#if"):
            skip.append(bool(re.match(r"#ifndef\s+USE_ROCM|#if\s+!\s*defined\s*\(?\s*USE_ROCM", stripped)))
        elif stripped.startswith("#else") and skip:
            skip[-1] = not skip[-1]
        elif stripped.startswith("#endif") and skip:
            skip.pop()
        elif not any(skip):
            for name in re.findall(r"&(\w+)", line):
                if name in defined:
                    return name, number
    return None
