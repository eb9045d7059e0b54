"""Where a library name is defined at a ref, what it dispatches to, and since when it exists.

``locate`` starts at the module's own file and follows the package's re-exports
(``from .x import name``, ``from .x import *``, the way ``aiter/__init__.py`` exposes its ops)
and its backward-compatibility maps (a module-level dict in a package ``__init__.py`` that maps
an old module name to its new dotted place, as ``aiter/ops/triton/__init__.py`` does).

``depth_files`` lists, for a found definition, the files a reviewer needs one level down: the
library modules it takes the kernels it calls from (``_triton_kernels/...``), the tuned config
JSON files whose names its string literals spell, and for a compiled op (``@compile_ops("module_x")``)
the C++/HIP sources the build config lists for that module.

``first_tag_with`` finds the first release tag after the pin that defines a name.
"""

import ast
import json
import re
from dataclasses import dataclass
from pathlib import PurePosixPath

from .upstream_uses import attribute_chain
from .upstream_uses import library_module
from .upstream_uses import parse

MAX_FILES_PER_SYMBOL = 64  # a package `__init__` star-imports some 40 op modules
MAX_CHECKS = 12
MAX_CONSTANTS = 10
MAX_LINE_CHARS = 200
MIN_CONFIG_NAME = 4
TRIVIAL_NUMBERS = {0, 1, -1}
SOURCE_SUFFIXES = (".cu", ".cpp", ".cc", ".hip", ".cuh", ".hpp", ".h")
RELEASE_TAG = re.compile(r"^v?(\d+(?:\.\d+)*)(?:\.post(\d+))?$")


@dataclass
class Outside:
    """The definition lies beyond the Python sources: ``fetched`` file and ``line`` import it."""

    fetched: object
    line: int


@dataclass
class Found:
    fetched: object
    node: ast.AST
    tree: ast.Module
    reexported_by: list


def module_files(library, module):
    parts = module.split(".")[1:]
    base = "/".join([library["package_dir"], *parts])
    if not parts:
        return [f"{base}/__init__.py"]
    return [f"{base}.py", f"{base}/__init__.py"]


def locate(fetcher, library, ref, module, name):
    """``Found``, an ``Outside`` when the trail leaves the library's Python sources, or None when absent."""
    repo = library["repo"]
    tree = fetcher.tree(repo, ref)
    module = _through_compat_maps(fetcher, library, ref, tree, module)
    while "." in module and not any(path in tree for path in module_files(library, module)):
        module, name = module.rsplit(".", 1)  # `Class.member(...)`: the class is the definition to read
    queue = [(path, name, []) for path in module_files(library, module) if path in tree]
    visited = set()
    outside = None
    while queue and len(visited) < MAX_FILES_PER_SYMBOL:
        path, wanted, trail = queue.pop(0)
        if (path, wanted) in visited:
            continue
        visited.add((path, wanted))
        fetched = fetcher.read(repo, ref, path)
        parsed = parse(fetched.text) if fetched else None
        if parsed is None:
            continue
        node = definition(parsed, wanted)
        if node is not None:
            return Found(fetched, node, parsed, trail)
        package = _package_of(library, path)
        explicit, starred = [], []
        for statement in top_level(parsed.body):
            if not isinstance(statement, ast.ImportFrom):
                continue
            relevant = [alias for alias in statement.names if alias.name == "*" or (alias.asname or alias.name) == wanted]
            if not relevant:
                continue
            source = _absolute_module(package, statement)
            files = [candidate for candidate in module_files(library, source or "") if candidate in tree]
            if source is None or not library_module(source, {library["module"]: library}) or not files:
                outside = outside or Outside(fetched, statement.lineno)  # a compiled extension or another package
                continue
            step = trail + [f"{path}:{statement.lineno}"]
            for alias in relevant:
                if alias.name == "*":
                    starred.extend((candidate, wanted, step) for candidate in files)
                else:
                    explicit.extend((candidate, alias.name, step) for candidate in files)
        starred.sort(key=lambda item: -_shared_words(item[0], wanted))
        queue = explicit + queue + starred
    if queue and outside is None:
        outside = Outside(None, None)  # the file budget ran out before the trail ended
    return outside


def _through_compat_maps(fetcher, library, ref, tree, module):
    """The module's current dotted name when a package's compatibility map renamed it."""
    parts = module.split(".")
    for cut in range(len(parts) - 1, 0, -1):
        if any(path in tree for path in module_files(library, ".".join(parts[:cut + 1]))):
            return module  # the module (or a deeper one) exists under its own name
        package = ".".join(parts[:cut])
        init = module_files(library, package)[-1]
        if init not in tree:
            continue
        fetched = fetcher.read(library["repo"], ref, init)
        mapped = _compat_entry(parse(fetched.text) if fetched else None, parts[cut])
        if mapped:
            return ".".join([package, mapped, *parts[cut + 1:]])
    return module


def _compat_entry(tree, old_name):
    """The new relative module a module-level ``{"old": "new.place"}`` dict gives ``old_name``."""
    for statement in (tree.body if tree else []):
        value = statement.value if isinstance(statement, (ast.Assign, ast.AnnAssign)) else None
        if isinstance(value, ast.Dict):
            for key, target in zip(value.keys, value.values):
                if (isinstance(key, ast.Constant) and key.value == old_name and isinstance(target, ast.Constant)
                        and isinstance(target.value, str) and re.fullmatch(r"[\w.]+", target.value)):
                    return target.value
    return None


def _package_of(library, path):
    """The dotted package a file in the library belongs to (its own name for ``__init__.py``)."""
    relative = PurePosixPath(path).relative_to(library["package_dir"]).parts
    return ".".join([library["module"], *relative[:-1]])


def _absolute_module(package, statement):
    if statement.level == 0:
        return statement.module
    parts = package.split(".")
    if statement.level > len(parts):
        return None
    base = parts[: len(parts) - statement.level + 1]
    return ".".join(base + ([statement.module] if statement.module else []))


def _shared_words(path, name):
    words = set(re.split(r"[^a-z0-9]+", path.lower()))
    return len(words & set(name.lower().split("_")))


def top_level(statements):
    """Module-level statements, looking inside top-level ``if`` / ``try`` blocks."""
    for statement in statements:
        yield statement
        if isinstance(statement, ast.If):
            yield from top_level(statement.body + statement.orelse)
        elif isinstance(statement, ast.Try):
            yield from top_level(statement.body + statement.orelse + statement.finalbody)


def definition(tree, name):
    for statement in top_level(tree.body):
        if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and statement.name == name:
            return statement
        if isinstance(statement, (ast.Assign, ast.AnnAssign)):
            targets = statement.targets if isinstance(statement, ast.Assign) else [statement.target]
            if any(isinstance(target, ast.Name) and target.id == name for target in targets):
                return statement
    return None


# --- one level down -------------------------------------------------------------------------------


def depth_files(fetcher, library, ref, found, settings):
    """``[(kind, path)]`` one level below a definition: kernel modules, config JSON, C++/HIP sources.

    A kernel module is a library module the definition launches a kernel from (``name[grid](...)``)
    or calls into from a folder named for kernels (``_triton_kernels/``); a utility it calls is not.
    """
    repo = library["repo"]
    tree = fetcher.tree(repo, ref)
    roots = {library["module"]: library}
    called, launched = _called_names(found.node)
    kernels, strings = [], _strings(found.node)
    package = _package_of(library, found.fetched.path)
    for statement in top_level(found.tree.body):
        if not isinstance(statement, ast.ImportFrom):
            continue
        used = [alias.name for alias in statement.names if (alias.asname or alias.name) in called]
        source = _absolute_module(package, statement)
        if not used or source is None or not library_module(source, roots):
            continue
        path = next((candidate for candidate in module_files(library, source) if candidate in tree), None)
        is_kernel = any(name in launched for name in used) or "kernel" in (path or "").rsplit("/", 1)[0]
        if path and is_kernel and path != found.fetched.path and path not in kernels:
            kernels.append(path)
            kernel = fetcher.read(repo, ref, path)
            kernel_tree = parse(kernel.text) if kernel else None
            for name in used:
                node = definition(kernel_tree, name) if kernel_tree else None
                strings |= _strings(node) if node is not None else set()
    kernels = kernels[:settings["kernel_modules_per_definition"]]
    files = [("kernel", path) for path in kernels]
    files += [("config", path) for path in _config_files(tree, strings)[:settings["configs_per_definition"]]]
    # a compiled op: the definition itself, or the same-module functions it calls (`gemm_a8w8_CK` -> `gemm_a8w8_ck`)
    compiled = [found.node] + [node for node in (definition(found.tree, name) for name in sorted(called)) if node]
    sources = []
    for node in compiled:
        sources += [path for path in _compiled_sources(fetcher, repo, ref, node, settings) if path not in sources]
    files += [("source", path) for path in sources[:settings["sources_per_op"]]]
    return files


def _called_names(node):
    """``(called, launched)``: names the body calls (``f(...)``) and launches (``kernel[grid](...)``),
    decorators left out."""
    called, launched = set(), set()
    for child in (item for statement in getattr(node, "body", []) for item in ast.walk(statement)):
        if isinstance(child, ast.Call):
            func = child.func.value if isinstance(child.func, ast.Subscript) else child.func
            if isinstance(func, ast.Name):
                called.add(func.id)
                if isinstance(child.func, ast.Subscript):
                    launched.add(func.id)
    return called, launched


def _strings(node):
    found = set()
    for child in ast.walk(node):
        if isinstance(child, ast.Constant) and isinstance(child.value, str) and len(child.value) >= MIN_CONFIG_NAME:
            found.add(child.value)
    return found


def _config_files(tree, strings):
    """Config JSON files a string names: ``NAME.json``, ``<arch>-NAME.json``, or the literal file tail."""
    wanted = []
    for text in sorted(strings):
        if "\n" in text or " " in text:
            continue
        exact = re.compile(rf"^(?:[A-Za-z0-9_]+-)?{re.escape(text)}\.json$" if not text.endswith(".json")
                           else rf"^.*{re.escape(text.lstrip('/'))}$")
        wanted += [path for path, entry in sorted(tree.items())
                   if entry["type"] == "blob" and path.endswith(".json")
                   and exact.match(path.rsplit("/", 1)[-1]) and path not in wanted]
    return wanted


def _compiled_sources(fetcher, repo, ref, node, settings):
    """The sources a compiled op's build-config entry lists (binding files last), or []."""
    rule = next((rule for rule in settings["compiled_ops"] if rule["repo"] == repo), None)
    module = _compiled_module(node, rule["decorator"]) if rule else None
    if module is None:
        return []
    config = fetcher.read(repo, ref, rule["build_config"])
    try:
        entry = json.loads(config.text).get(module) if config else None
    except ValueError:
        return []
    sources = []
    for source in (entry or {}).get("srcs") or []:
        path = re.sub(r"^f?['\"]|['\"]$", "", str(source))
        for variable, value in rule["path_variables"].items():
            path = path.replace("{" + variable + "}", value)
        path = path.replace("//", "/").lstrip("/")
        if path.endswith(SOURCE_SUFFIXES) and "{" not in path:
            sources.append(path)
    sources.sort(key=lambda path: "pybind" in path)  # the kernel before the binding
    return sources[:settings["sources_per_op"]]


def _compiled_module(node, decorator):
    for item in getattr(node, "decorator_list", []):
        if isinstance(item, ast.Call) and (attribute_chain(item.func) or [""])[-1] == decorator and item.args:
            first = item.args[0]
            if isinstance(first, ast.Constant) and isinstance(first.value, str):
                return first.value
    return None


# --- release tags -------------------------------------------------------------------------------


def release_order(tags):
    """Release tags (``v0.1.10``, ``v0.1.10.post3``; no rc or branch-like tags), oldest first."""
    keyed = []
    for tag in tags:
        match = RELEASE_TAG.match(tag)
        if match:
            keyed.append(((tuple(int(part) for part in match.group(1).split(".")), int(match.group(2) or -1)), tag))
    return [tag for _, tag in sorted(keyed)]


def first_tag_with(fetcher, library, tags, pinned, module, name):
    """``(tag, Found)`` of the first release after ``pinned`` that defines the name, or None.

    Binary search over the releases newer than the pin (a name, once added, stays), checking
    the newest first so that a name no release has costs one lookup.
    """
    ordered = release_order(tags)
    newer = ordered[ordered.index(pinned) + 1:] if pinned in ordered else ordered
    if not newer:
        return None

    def at(tag):
        found = locate(fetcher, library, tag, module, name)
        return found if isinstance(found, Found) else None

    last = at(newer[-1])
    if last is None:
        return None
    low, high, best = 0, len(newer) - 1, (newer[-1], last)
    while low < high:
        middle = (low + high) // 2
        found = at(newer[middle])
        if found is not None:
            best, high = (newer[middle], found), middle
        else:
            low = middle + 1
    return best


# --- what a definition says -----------------------------------------------------------------------


def signature(node):
    decorators = "".join(f"@{ast.unparse(decorator)} " for decorator in getattr(node, "decorator_list", []))
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        returns = f" -> {ast.unparse(node.returns)}" if node.returns else ""
        text = f"{decorators}def {node.name}({ast.unparse(node.args)}){returns}"
    elif isinstance(node, ast.ClassDef):
        bases = ", ".join(ast.unparse(base) for base in node.bases)
        text = f"{decorators}class {node.name}({bases})"
        init = next((item for item in node.body if isinstance(item, ast.FunctionDef) and item.name == "__init__"), None)
        if init is not None:
            text += f"; __init__({ast.unparse(init.args)})"
    else:
        text = ast.unparse(node)
    return one_line(text, 400)


def checks(node):
    """The asserts and raises in the definition's body, ``L<line> <statement>``."""
    found = []
    for child in ast.walk(node):
        if isinstance(child, (ast.Assert, ast.Raise)):
            found.append((child.lineno, one_line(ast.unparse(child))))
    return [f"L{line} {statement}" for line, statement in sorted(found)[:MAX_CHECKS]]


def constants(node, tree, text):
    """Source lines of the definition (and module constants it names) holding numeric literals."""
    source = text.splitlines()
    lines = set()
    defaults = {id(d) for d in ast.walk(node.args) if isinstance(d, ast.Constant)} if hasattr(node, "args") else set()
    used_names = {child.id for child in ast.walk(node) if isinstance(child, ast.Name)}
    for child in ast.walk(node):
        if _is_number(child) and id(child) not in defaults:
            lines.add(child.lineno)
    for statement in tree.body:
        if isinstance(statement, ast.Assign) and _is_number(statement.value):
            if any(isinstance(target, ast.Name) and target.id in used_names for target in statement.targets):
                lines.add(statement.lineno)
    return [f"L{line} {one_line(source[line - 1].strip())}" for line in sorted(lines)[:MAX_CONSTANTS] if line <= len(source)]


def _is_number(node):
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        node = node.operand
    return (
        isinstance(node, ast.Constant)
        and isinstance(node.value, (int, float))
        and not isinstance(node.value, bool)
        and node.value not in TRIVIAL_NUMBERS
    )


def one_line(text, limit=MAX_LINE_CHARS):
    flat = " ".join(str(text).split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"
