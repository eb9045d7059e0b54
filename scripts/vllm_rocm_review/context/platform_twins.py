"""Platform twins: a changed platform method against the same method of its sibling platform, at head.

``RocmPlatform.check_and_update_config`` mirrors ``CudaPlatformBase.check_and_update_config``; a
step one does and the other skips (a call, a guard) is the difference a reviewer looks for. The
pairs of files are data (``platform_twins.pairs``); names that belong to one vendor, and calls that
are not steps (logging, builtins), are left out so only platform-neutral differences remain.
"""

import ast
import re

from .symbols import parse_python
from .workspace import flag


def platform_twins(ws, symbols):
    """(entries, flags): for each changed method of a paired platform file, the steps one twin has and the other lacks.

    A step counts only when the method lacking it could take it as written: every name the step
    reads is one that method also uses, and a ``cls.x()`` call is not the twin's own helper. Only a
    gap the PR opens is flagged: a step it adds to the reference platform (the pair's second file)
    that the reviewed one lacks, or removes from either while the twin keeps it. A step added to the
    reviewed platform alone is its own business, and standing differences are listed, not flagged.
    """
    settings = ws.settings["platform_twins"]
    vendor = re.compile(settings["vendor_words"], re.IGNORECASE)
    ignored = re.compile(settings["ignored_calls"])
    cap = settings["max_differences"]
    changed = _changed_methods(ws, symbols, settings["pairs"])
    references = {reference for _, reference in settings["pairs"]}
    if not changed:
        return [], []
    twin_paths = sorted({twin for _, _, twin, _ in changed})
    twin_trees = {path: parse_python(text) for path, text in ws.reader.read_many(ws.head, twin_paths).items() if text}
    added = ws.added_lines()
    entries, flags = [], []
    for path, node, twin_path, before in changed:
        twin = _methods(twin_trees.get(twin_path)).get(node.name)
        if twin is None:
            continue
        own_helpers, twin_helpers = set(_methods(ws.head_trees[path], every=True)), set(
            _methods(twin_trees[twin_path], every=True))
        own, other = _steps(node, vendor, ignored), _steps(twin, vendor, ignored)
        had = _steps(before, vendor, ignored) if before is not None else {"calls": {}, "guards": {}}
        skipped = _takeable(other, own, _vocabulary(node), own_helpers, twin_helpers)
        removed_here = [shown for shown, _, text, kind in skipped if text in had[kind]]
        new_here = [shown for shown, line, _, _ in _takeable(own, other, _vocabulary(twin), twin_helpers, own_helpers)
                    if (path, line) in added]
        standing = [shown for shown, _, _, _ in skipped if shown not in removed_here]
        entries.append({"path": path, "line": node.lineno, "method": node.name, "twin": f"{twin_path}:{twin.lineno}",
                        "added_here_twin_lacks": new_here[:cap], "removed_here_twin_keeps": removed_here[:cap],
                        "standing_twin_only": standing[:cap],
                        "more": sum(max(0, len(items) - cap) for items in (new_here, removed_here, standing))})
        parts = []
        if new_here and path in references:
            parts.append(f"the PR adds {_listing(new_here)} here and the twin {twin_path}:{twin.lineno} lacks it")
        if removed_here:
            parts.append(f"the PR removes {_listing(removed_here)} here and the twin {twin_path}:{twin.lineno} keeps it")
        if parts:
            flags.append(flag("PLATFORM-TWIN-GAP", path, node.lineno, f"{node.name}: " + "; ".join(parts)))
    return entries, flags


def _takeable(steps, lacking, vocabulary, lacking_helpers, having_helpers):
    """(shown, line, text, kind) of the ``steps`` the ``lacking`` method does not take but could as written.

    ``vocabulary`` is the lacking method's names; the helpers are each file's methods and functions.
    """
    found = []
    for kind, shown in (("calls", "`{}()`"), ("guards", "`if {}`")):
        for text, (line, roots) in sorted(steps[kind].items(), key=lambda item: item[1][0]):
            if text not in lacking[kind] and all(
                    _available(root, vocabulary, lacking_helpers, having_helpers) for root in roots):
                found.append((shown.format(text), line, text, kind))
    return found


def _available(root, vocabulary, lacking_helpers, having_helpers):
    """A plain name the lacking method uses; a ``cls.x`` it uses, defines in its file, or both inherit."""
    if root.startswith("."):
        return root in vocabulary or root[1:] in lacking_helpers or root[1:] not in having_helpers
    return root in vocabulary


def _listing(steps):
    return ", ".join(steps[:3]) + (f" (+{len(steps) - 3} more)" if len(steps) > 3 else "")


def _changed_methods(ws, symbols, pairs):
    """(path, method at head, twin path, method at base or None) for each paired-file method the diff touches."""
    twin_of = {}
    for first, second in pairs:
        twin_of[first], twin_of[second] = second, first
    found, base_trees = {}, {}
    for entry in symbols:
        parts = entry["qualname"].split(".")
        tree = ws.head_trees.get(entry["path"])
        if entry["path"] not in twin_of or len(parts) < 2 or entry["head"] is None or tree is None:
            continue
        node = _methods(tree, parts[0]).get(parts[1])
        if node is not None:
            base_path = entry["base_path"]
            if base_path not in base_trees:
                base_trees[base_path] = parse_python(ws.base_texts.get(base_path) or "")
            before = _methods(base_trees[base_path], parts[0]).get(parts[1])
            found[(entry["path"], node.name)] = (entry["path"], node, twin_of[entry["path"]], before)
    return [found[key] for key in sorted(found)]


def _methods(tree, owner=None, every=False):
    """{name: first definition} of the methods of the module's top-level classes (or of class ``owner``);
    with ``every``, its module-level functions too."""
    methods = {}
    for cls in getattr(tree, "body", []):
        if every and isinstance(cls, (ast.FunctionDef, ast.AsyncFunctionDef)):
            methods.setdefault(cls.name, cls)
        if isinstance(cls, ast.ClassDef) and owner in (None, cls.name):
            for node in cls.body:
                if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    methods.setdefault(node.name, node)
    return methods


def _steps(method, vendor, ignored):
    """{"calls": {name: (line, roots)}, "guards": {test: (line, roots)}}: platform-neutral calls and ``if`` tests.

    ``roots`` are the names a step needs from its scope; a ``cls.x()`` call's root is ``.x``. A dispatch
    (``if backend == Backend.X:``) and everything under it is a choice among options, not a step.
    """
    calls, guards = {}, {}
    local = _locals(method)
    pending = list(ast.iter_child_nodes(method))
    while pending:
        node = pending.pop()
        if isinstance(node, (ast.If, ast.IfExp)) and _is_dispatch(node.test):
            continue
        pending.extend(ast.iter_child_nodes(node))
        if isinstance(node, ast.Call):
            name = _callee(node.func)
            if name and name.split(".")[0] not in local and not ignored.search(name) and not vendor.search(name):
                calls.setdefault(name, (node.lineno, _roots(node.func)))
        elif isinstance(node, (ast.If, ast.IfExp)):
            test = node.test.operand if isinstance(node.test, ast.UnaryOp) and isinstance(node.test.op, ast.Not) else node.test
            shown = _normalize(ast.unparse(test))
            if not vendor.search(shown):
                guards.setdefault(shown, (node.lineno, _roots(test)))
    return {"calls": calls, "guards": guards}


def _is_dispatch(test):
    """A test that picks among choices (``== Enum.MEMBER``, ``!= 64``, ``in (...)``), not a step to take."""
    for node in ast.walk(test):
        if isinstance(node, ast.Compare):
            for operand in node.comparators:
                if isinstance(operand, (ast.Constant, ast.Tuple, ast.List, ast.Set)) and not (
                        isinstance(operand, ast.Constant) and operand.value is None):
                    return True
                if isinstance(operand, ast.Attribute) and operand.attr.isupper():
                    return True
    return False


def _roots(expression):
    """The free names an expression reads, with ``cls.x``/``self.x``/``super().x`` as ``.x``."""
    roots = set()
    for node in ast.walk(expression):
        if isinstance(node, ast.Attribute) and _receiver(node.value):
            roots.add("." + node.attr)
        elif isinstance(node, ast.Name) and node.id not in ("self", "cls", "super"):
            roots.add(node.id)
    return roots


def _receiver(node):
    return (isinstance(node, ast.Name) and node.id in ("self", "cls")) or (
        isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "super")


def _locals(method):
    """The method's parameters and the names it assigns: a call on one of them is this method's own business."""
    names = {arg.arg for arg in ast.walk(method.args) if isinstance(arg, ast.arg)}
    return names | {node.id for node in ast.walk(method) if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store)}


def _vocabulary(method):
    """Every name the method reads or binds, and ``.x`` for each ``cls.x``/``self.x`` it uses."""
    names = {arg.arg for arg in ast.walk(method.args) if isinstance(arg, ast.arg)}
    return names | _roots(method) | {node.id for node in ast.walk(method) if isinstance(node, ast.Name)}


def _callee(func):
    """A call's dotted name without its ``self.``/``cls.`` receiver; None for computed callees and ``super()``
    (each platform decides whether to chain to the base class)."""
    parts = []
    while isinstance(func, ast.Attribute):
        parts.append(func.attr)
        func = func.value
    if isinstance(func, ast.Name):
        if func.id not in ("self", "cls"):
            parts.append(func.id)
    else:
        return None
    return ".".join(reversed(parts)) or None


def _normalize(text):
    return re.sub(r"\b(self|cls)\.", "", " ".join(text.split()))
