"""Which AITER/mori names a PR's changed code uses, and how each use changed.

Scope: the added lines of every changed Python file plus the whole body of every function the
PR changes, so an existing library call inside a changed function (the PR changes what is
passed, not the call) is found too. A name is reached through:

- ``import aiter``, ``import aiter as rocm_aiter``, ``from aiter.ops.x import y as z``
  (module-level or inside a function);
- ``torch.ops.aiter.<op>(...)``: the op a library function of that name registers;
- the ``rocm_aiter_ops`` wrappers of ``vllm/_aiter_ops.py`` (a method, a registered
  ``torch.ops.vllm`` op, or a module function, down to the library call).

Each use is marked ``added`` (the file did not use the name at base), ``changed call`` (an
added line touches a use the base already had) or ``unchanged call`` (a use inside a changed
function that the PR did not touch), and ``guarded`` when its import or call sits inside
``try/except ImportError`` or behind an availability probe (``availability_probe`` in the
surface's ``context_pack.upstream``).
"""

import ast
from dataclasses import dataclass

from .symbols import parse_python

MAX_WRAPPER_DEPTH = 4
ADDED = "added"
CHANGED = "changed call"
UNCHANGED = "unchanged call"
IMPORT_ERRORS = {"ImportError", "ModuleNotFoundError", "Exception", "BaseException", "AttributeError"}


@dataclass
class Use:
    library: dict
    module: str
    name: str
    called_at: str
    via: str = None
    change: str = ADDED
    guarded: bool = False

    @property
    def symbol(self):
        return f"{self.module}.{self.name}"


def find_uses(*, added_lines, changed_ranges, read_base, read_head, libraries, probe):
    """Library names used in the changed code, first use first, one entry per name.

    ``changed_ranges`` maps a path to the head line ranges ``(start, end)`` of its changed functions.
    """
    added, texts = {}, {}
    for entry in added_lines:
        added.setdefault(entry["path"], set()).add(entry["line"])
        texts[(entry["path"], entry["line"])] = entry["text"]
    roots = {library["module"]: library for library in libraries}
    wrappers = Wrappers(libraries, read_head, probe)
    needles = (*roots, *wrappers.class_names)
    uses, index = [], {}
    for path in sorted(set(added) | set(changed_ranges)):
        if not path.endswith(".py"):
            continue
        head_text = read_head(path)
        if head_text is None:  # no head version to read: the added lines on their own
            numbers = added.get(path, set())
            head_text = "\n".join(texts.get((path, n), "") for n in range(1, max(numbers, default=0) + 1))
        if not any(needle in head_text for needle in needles):
            continue  # no library or wrapper name anywhere in the file: nothing to parse
        tree = parse(head_text)
        if tree is None:
            continue
        base_names = _names_used(parse(read_base(path)), roots)
        lines = added.get(path, set())
        ranges = changed_ranges.get(path, [])
        for found in sorted(_uses_in_file(tree, lines, ranges, roots, wrappers, probe), key=lambda item: item[0]):
            line, end, module, name, via, guarded = found
            touched = any(number in lines for number in range(line, end + 1))
            change = (CHANGED if (module, name) in base_names else ADDED) if touched else UNCHANGED
            key = (module, name)
            use = Use(roots[module.split(".")[0]], module, name, f"{path}:{line}", via, change, guarded)
            if key not in index:
                index[key] = use
                uses.append(use)
            elif _RANK[change] < _RANK[index[key].change]:  # keep the strongest mark, the first site of it
                uses[uses.index(index[key])] = use
                index[key] = use
    return uses


_RANK = {ADDED: 0, CHANGED: 1, UNCHANGED: 2}


def _uses_in_file(tree, lines, ranges, roots, wrappers, probe):
    """``(line, end line, module, name, via, guarded)`` for each library use in scope."""
    def in_scope(node):
        end = getattr(node, "end_lineno", node.lineno) or node.lineno
        return any(number in lines for number in range(node.lineno, end + 1)) or any(
            start <= node.lineno <= stop for start, stop in ranges)

    parents = parent_map(tree)
    aliases, names, sites = import_maps(tree, roots)
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and library_module(node.module, roots) and node.level == 0:
            for alias in node.names:
                line = getattr(alias, "lineno", node.lineno)
                if line in lines and alias.name != "*":
                    found.append((line, line, node.module, alias.name, None, is_guarded(node, parents, probe)))
        elif isinstance(node, ast.Call) and in_scope(node):
            end = node.end_lineno or node.lineno
            target = call_target(node.func, aliases, names)
            if target:
                guarded = is_guarded(node, parents, probe) or sites_guarded(node.func, sites, parents, probe)
                found.append((node.lineno, end, *target, None, guarded))
                continue
            chain = attribute_chain(node.func) or []
            if len(chain) == 4 and chain[:2] == ["torch", "ops"] and chain[2] in roots:
                found.append((node.lineno, end, chain[2], chain[3], f"torch.ops.{chain[2]}.{chain[3]}",
                               is_guarded(node, parents, probe)))
                continue
            method = chain[1] if len(chain) == 2 and chain[0] in wrappers.class_names else None
            if method:
                for module, name, guarded in wrappers.targets(method):
                    found.append((node.lineno, end, module, name, f"{wrappers.class_of(method)}.{method}",
                                  guarded or is_guarded(node, parents, probe)))
        elif isinstance(node, ast.Attribute) and in_scope(node) and isinstance(node.value, ast.Name):
            module = aliases.get(node.value.id, "")
            if "." in module:  # `import aiter.ops.x as m` then `m.CONFIG`: a name of that module
                found.append((node.lineno, node.lineno, module, node.attr, None, False))
    return found


def _names_used(tree, roots):
    """``{(module, name)}`` the base version of a file imports or calls (empty without a base)."""
    if tree is None:
        return set()
    aliases, names, _ = import_maps(tree, roots)
    used = set(names.values())
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            target = call_target(node.func, aliases, names)
            if target:
                used.add(target)
            chain = attribute_chain(node.func) or []
            if len(chain) == 4 and chain[:2] == ["torch", "ops"] and chain[2] in roots:
                used.add((chain[2], chain[3]))
    return used


def library_module(module, roots):
    return bool(module) and module.split(".")[0] in roots


def import_maps(tree, roots):
    """``(aliases, names, sites)``: local name -> module for ``import``, -> (module, name) for
    ``from``, and local name -> the import statements that bind it."""
    aliases, names, sites = {}, {}, {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if library_module(alias.name, roots):
                    local = alias.asname or alias.name.split(".")[0]
                    aliases[local] = alias.name if alias.asname else local
                    sites.setdefault(local, []).append(node)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and library_module(node.module, roots):
            for alias in node.names:
                if alias.name != "*":
                    local = alias.asname or alias.name
                    names[local] = (node.module, alias.name)
                    sites.setdefault(local, []).append(node)
    return aliases, names, sites


def call_target(func, aliases, names):
    """``(module, name)`` a call resolves to through the file's library imports, or None."""
    if isinstance(func, ast.Name):
        return names.get(func.id)
    chain = attribute_chain(func)
    if chain and len(chain) >= 2:
        if chain[0] in aliases:
            return ".".join([aliases[chain[0]], *chain[1:-1]]), chain[-1]
        if chain[0] in names:
            module, name = names[chain[0]]
            return ".".join([module, name, *chain[1:-1]]), chain[-1]
    return None


def attribute_chain(node):
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        return [node.id, *reversed(parts)]
    return None


def parent_map(tree):
    return {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}


def is_guarded(node, parents, probe):
    """Inside ``try`` with an ImportError-catching handler, or under an ``if`` that probes availability."""
    child, parent = node, parents.get(node)
    while parent is not None:
        if isinstance(parent, ast.Try) and child in parent.body and any(
                _catches_import_error(handler) for handler in parent.handlers):
            return True
        if isinstance(parent, (ast.If, ast.IfExp)) and child is not parent.test and probe.search(ast.unparse(parent.test)):
            return True
        child, parent = parent, parents.get(parent)
    return False


def sites_guarded(func, sites, parents, probe):
    """Whether every import that binds the call's first name is guarded."""
    chain = attribute_chain(func) or []
    bound = sites.get(chain[0], []) if chain else []
    return bool(bound) and all(is_guarded(site, parents, probe) for site in bound)


def _catches_import_error(handler):
    if handler.type is None:
        return True
    types = handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type]
    return any((attribute_chain(kind) or [""])[-1] in IMPORT_ERRORS for kind in types)


class Wrappers:
    """The wrapper classes (``rocm_aiter_ops``) and what each method calls in its library.

    A method reaches the library directly (``from aiter import X`` in its body, then ``X(...)``),
    through a registered custom op (``torch.ops.vllm.<op>(...)`` -> the ``op_func`` given to
    ``direct_register_custom_op``), or through another method or module function of the file.
    """

    def __init__(self, libraries, read_head, probe):
        self.methods, self.functions, self.ops = {}, {}, {}
        self.module_aliases, self.module_names, self.module_sites = {}, {}, {}
        self.roots = {library["module"]: library for library in libraries}
        self.probe = probe
        self.parents = {}
        self._class_of = {}
        self.class_names = set()
        for library in libraries:
            if not library.get("wrappers"):
                continue
            tree = parse(read_head(library["wrappers"]))
            if tree is None:
                continue
            self.parents.update(parent_map(tree))
            self.class_names.add(library["wrapper_class"])
            imports = [node for node in tree.body if isinstance(node, (ast.Import, ast.ImportFrom, ast.Try, ast.If))]
            aliases, names, sites = import_maps(ast.Module(body=imports, type_ignores=[]), self.roots)
            self.module_aliases.update(aliases)
            self.module_names.update(names)
            self.module_sites.update(sites)
            for node in tree.body:
                if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    self.functions[node.name] = node
                elif isinstance(node, ast.ClassDef) and node.name == library["wrapper_class"]:
                    for item in node.body:
                        if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
                            self.methods[item.name] = item
                            self._class_of[item.name] = node.name
            for node in ast.walk(tree):
                if isinstance(node, ast.Call) and attribute_chain(node.func) == ["direct_register_custom_op"]:
                    keywords = {keyword.arg: keyword.value for keyword in node.keywords}
                    op, func = keywords.get("op_name"), keywords.get("op_func")
                    if isinstance(op, ast.Constant) and isinstance(func, ast.Name):
                        self.ops[op.value] = func.id

    def class_of(self, method):
        return self._class_of.get(method, "")

    def targets(self, method):
        """``(module, name, guarded)`` for each library call a method reaches."""
        if method not in self.methods:
            return []
        found = []
        self._walk(self.methods[method], 0, set(), found)
        return found

    def _walk(self, function, depth, visited, found):
        if depth > MAX_WRAPPER_DEPTH or id(function) in visited:
            return
        visited.add(id(function))
        local_aliases, local_names, local_sites = import_maps(function, self.roots)
        aliases = {**self.module_aliases, **local_aliases}
        names = {**self.module_names, **local_names}
        sites = {**self.module_sites, **local_sites}
        for node in ast.walk(function):
            if not isinstance(node, ast.Call):
                continue
            target = call_target(node.func, aliases, names)
            if target:
                if not any(item[:2] == target for item in found):
                    guarded = is_guarded(node, self.parents, self.probe) or sites_guarded(
                        node.func, sites, self.parents, self.probe)
                    found.append((*target, guarded))
                continue
            chain = attribute_chain(node.func) or []
            callee = None
            if chain[:3] == ["torch", "ops", "vllm"] and len(chain) >= 4:
                callee = self.functions.get(self.ops.get(chain[3], ""))
            elif len(chain) == 4 and chain[:2] == ["torch", "ops"] and chain[2] in self.roots:
                if not any(item[:2] == (chain[2], chain[3]) for item in found):
                    found.append((chain[2], chain[3], is_guarded(node, self.parents, self.probe)))
            elif len(chain) == 2 and (chain[0] in self.class_names or chain[0] == "cls"):
                callee = self.methods.get(chain[1])
            elif len(chain) == 1:
                callee = self.functions.get(chain[0])
            if callee is not None:
                self._walk(callee, depth + 1, visited, found)


def parse(text):
    """The module's AST; None for a missing, empty or unparsable file."""
    return parse_python(text) if text else None
