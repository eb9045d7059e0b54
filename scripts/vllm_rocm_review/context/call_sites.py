"""Stale call sites: calls outside the diff that do not pass a parameter the PR adds or re-defaults.

Every such parameter is listed with its counts; only a now-required one that a call omits is flagged.

The word search finds every line naming the function; ``ast`` then keeps only the calls that
can be this function: a bare call where the file defines it or imports it from its module, a
``module.name()`` call through an import of that module, and for a method an attribute call in
a file that defines or names its class. Test, doc and example code is left out.
"""

import ast
import re

from .symbols import parse_python
from .symbols import signature_arguments
from .workspace import flag
from .workspace import is_product_code


def stale_call_sites(ws, symbols):
    """(entries, flags): per changed parameter, the call sites that pass it and those that do not."""
    settings = ws.settings["stale_call_sites"]
    targets = [target for entry in symbols if is_product_code(entry["path"])
               for target in [_target(entry)] if target and target["parameters"]]
    if not targets:
        return [], []
    names = sorted({target["name"] for target in targets})
    hits = {}
    for path, _, text in ws.reader.grep_words(ws.head, names, ["*.py"]):
        if is_product_code(path):
            hits.setdefault(path, set()).update(word for word in names if word in text)
    files = sorted(hits)[:settings["max_files"]]
    texts = {path: text for path, text in ws.reader.read_many(ws.head, files).items() if text}
    modules = {}

    def module(path):
        if path not in modules:
            modules[path] = _Module(ws.head_trees.get(path) or parse_python(texts[path]), texts[path])
        return modules[path]

    added = ws.added_lines()
    removed_calls = _removed_calls(ws.diffs, names)
    entries, flags = [], []
    for target in targets:
        calls = [(path, call) for path in sorted(texts) if target["name"] in hits[path]
                 and _may_call(target, path, texts[path]) for call in _calls_of(target, path, module(path))]
        for parameter in target["parameters"]:
            entry = _tally(target, parameter, calls, added, removed_calls, settings["sites_shown"])
            if entry["call_sites"]:
                entries.append(entry)
            if _worth_flagging(parameter, entry):
                flags.append(flag("CALL-SITE-STALE", target["path"], target["line"], _message(target, parameter, entry)))
    entries.sort(key=lambda e: (-e["stale_outside_diff"], e["function"], e["parameter"]))
    return entries[:settings["max_entries"]], flags


def _target(entry):
    """The call name, module and changed parameters of a function whose signature the PR changes."""
    if entry["kind"] != "function" or entry["change"] != "modified" or not entry["signature_changed"]:
        return None
    parts = entry["qualname"].split(".")
    if len(parts) > 2 or parts[-1].startswith("__") and parts[-1] != "__init__":
        return None
    base, head = _parameters(entry["base"]["signature"]), _parameters(entry["head"]["signature"])
    if base is None or head is None:
        return None
    bound = len(parts) == 2 and head["positional"][:1] in (["self"], ["cls"])
    positional = head["positional"][1:] if bound else head["positional"]
    changed = []
    for name, default in head["defaults"].items():
        if name not in base["defaults"]:
            changed.append({"name": name, "change": "added", "default": default,
                            "position": positional.index(name) if name in positional else None})
        elif base["defaults"][name] != default:
            changed.append({"name": name, "change": "default", "before": base["defaults"][name], "default": default,
                            "position": positional.index(name) if name in positional else None})
    constructor = parts[-1] == "__init__"
    return {"qualname": entry["qualname"], "path": entry["path"], "line": entry["head"]["start"],
            "name": parts[0] if constructor else parts[-1], "owner": parts[0] if len(parts) == 2 else None,
            "method": len(parts) == 2 and not constructor, "module": entry["path"][:-3].replace("/", "."),
            "parameters": changed}


def _parameters(signature):
    """{"positional": [names], "defaults": {name: default text or None}} of a ``def`` signature."""
    node = signature_arguments(signature)
    if node is None:
        return None
    args = node.args
    positional = [arg.arg for arg in args.posonlyargs + args.args]
    padded = [None] * (len(positional) - len(args.defaults)) + list(args.defaults)
    defaults = {name: ast.unparse(value) if value is not None else None for name, value in zip(positional, padded)}
    defaults.update({arg.arg: ast.unparse(value) if value is not None else None
                     for arg, value in zip(args.kwonlyargs, args.kw_defaults)})
    return {"positional": positional, "defaults": defaults}


def _may_call(target, path, text):
    """A cheap text test before parsing: the file defines the target, names its class, or imports from its module."""
    if path == target["path"]:
        return True
    if target["method"]:
        return _names_word(text, target["owner"])
    parts = target["module"].split(".")
    prefixes = "|".join(re.escape(".".join(parts[:n])) for n in range(2, len(parts) + 1))
    return _names_word(text, parts[-1]) or re.search(rf"\bfrom\s+({prefixes})\s+import\b", text) is not None


class _Module:
    """One file's calls by callee name and its imports, walked once for every target."""

    def __init__(self, tree, text):
        self.text = text
        self.calls, self.imports = {}, []
        for node in ast.walk(tree) if tree is not None else ():
            if isinstance(node, ast.Call):
                func = node.func
                name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
                if name:
                    self.calls.setdefault(name, []).append(node)
            elif isinstance(node, (ast.Import, ast.ImportFrom)):
                self.imports.append(node)


def _calls_of(target, path, module):
    """The calls in ``module`` that resolve to ``target`` (see the module docstring)."""
    own_file = path == target["path"]
    names, modules = _imports(module.imports, target)
    text = module.text
    found = []
    for node in module.calls.get(target["name"], []) + [c for alias in names - {target["name"]}
                                                         for c in module.calls.get(alias, [])]:
        func = node.func
        if target["method"]:
            if isinstance(func, ast.Attribute) and func.attr == target["name"] and (
                    own_file or _names_word(text, target["owner"])):
                found.append(node)
        elif isinstance(func, ast.Name):
            if func.id in names or (own_file and func.id == target["name"]):
                found.append(node)
        elif isinstance(func, ast.Attribute) and func.attr == target["name"]:
            if ast.unparse(func.value) in modules:
                found.append(node)
    return found


def _imports(imports, target):
    """(local names bound to the target, expressions naming its module) from the file's imports."""
    module = target["module"]
    package, _, leaf = module.rpartition(".")
    names, modules = set(), {module}
    for node in imports:
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            for alias in node.names:
                if alias.name == target["name"] and (module == node.module or module.startswith(node.module + ".")):
                    names.add(alias.asname or alias.name)
                if node.module == package and alias.name == leaf:
                    modules.add(alias.asname or alias.name)
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name == module:
                    modules.add(alias.asname or alias.name)
    return names, modules


def _names_word(text, word):
    return re.search(rf"\b{re.escape(word)}\b", text) is not None


def _passes(call, parameter):
    """True when the call passes ``parameter`` (by keyword or position) or may (``*args``, ``**kwargs``)."""
    if any(kw.arg is None or kw.arg == parameter["name"] for kw in call.keywords):
        return True
    if any(isinstance(arg, ast.Starred) for arg in call.args):
        return True
    return parameter["position"] is not None and len(call.args) > parameter["position"]


def _removed_calls(diffs, names):
    """{(path, name)} where the diff removes a line calling ``name``: an existing call the PR rewrote."""
    found = set()
    for diff in diffs:
        for _, text in diff.removed:
            for name in names:
                if re.search(rf"\b{re.escape(name)}\s*\(", text) and not re.match(r"\s*(async\s+)?def\s", text):
                    found.add((diff.path, name))
    return found


def _tally(target, parameter, calls, added, removed_calls, shown):
    """Counts of the call sites: passing, in the diff, updated (an existing call rewritten to pass it), stale."""
    passing, updated, stale, in_diff = 0, 0, [], 0
    for path, call in calls:
        touched = any((path, line) in added for line in range(call.lineno, call.end_lineno + 1))
        in_diff += touched
        if _passes(call, parameter):
            passing += 1
            updated += touched and (path, target["name"]) in removed_calls
        elif not touched:
            stale.append(f"{path}:{call.lineno}")
    return {"function": target["qualname"], "path": target["path"], "line": target["line"],
            "parameter": parameter["name"], "change": _change(parameter), "call_sites": len(calls), "passing": passing,
            "in_diff": in_diff, "updated": updated, "stale_outside_diff": len(stale), "stale_sites": stale[:shown]}


def _change(parameter):
    def shown(default):
        return "required" if default is None else f"default {default}"

    if parameter["change"] == "added":
        return f"added ({shown(parameter['default'])})"
    return f"{shown(parameter['before'])} → {shown(parameter['default']).removeprefix('default ')}"


def _worth_flagging(parameter, entry):
    """A parameter that is now required and that some call outside the diff omits: that call now fails.

    A call left on a new default is listed, not flagged: read over real PRs, most such calls want
    the default, so the flag would be wrong more often than right.
    """
    return bool(entry["stale_outside_diff"]) and parameter["default"] is None


def _message(target, parameter, entry):
    verb = "omit it (now required)"
    return (f"{target['qualname']}: {entry['passing']} of {entry['call_sites']} call site(s) pass "
            f"`{parameter['name']}` ({entry['change']}); {entry['stale_outside_diff']} outside the diff {verb}, "
            f"e.g. {', '.join(entry['stale_sites'][:2])}")
