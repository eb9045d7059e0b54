"""Section 4: environment variables the diff reads, sets, registers or removes, against vllm/envs.py."""

import ast
import re

from . import symbols as sym
from .changes import word_finder
from .workspace import flag
from ..core.surface import compile_pattern

TRUE_WORDS = {"1", "true"}
FALSE_WORDS = {"0", "false"}


def registry(text):
    """{name: {"line", "default"}} of vllm/envs.py: entries of ``environment_variables`` and the
    TYPE_CHECKING defaults; None when the file is absent or does not parse."""
    tree = sym.parse_python(text) if text else None
    if tree is None:
        return None
    defaults, registered = {}, {}
    for node in tree.body:
        if isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING":
            for item in node.body:
                if isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name) and item.value is not None:
                    defaults[item.target.id] = ast.unparse(item.value)
        target = node.target if isinstance(node, ast.AnnAssign) else (node.targets[0] if isinstance(node, ast.Assign) else None)
        if isinstance(target, ast.Name) and target.id == "environment_variables" and isinstance(node.value, ast.Dict):
            for key in node.value.keys:
                if isinstance(key, ast.Constant) and isinstance(key.value, str):
                    registered[key.value] = key.lineno
    return {name: {"line": line, "default": defaults.get(name)} for name, line in registered.items()}


def _same_value(value, default):
    """Whether a value set in code, a test or CI equals the registered default."""
    if default is None:
        return False
    value = value.strip().rstrip(",").strip().strip("\"'").lower()
    default = default.strip().strip("\"'").lower()
    if default == "true":
        return value in TRUE_WORDS
    if default == "false":
        return value in FALSE_WORDS
    return value == default


def _events(ws, name_pattern, registry_path):
    """(name, kind, side, path, line, value) for every env-var mention in changed lines."""
    checks = ws.surface["checks"]["env_vars"]
    reads = [compile_pattern(p) for p in checks["reads"] + checks["registry_reads"]]
    sets = [(compile_pattern(p["pattern"]), tuple(p.get("suffixes") or ())) for p in ws.settings["env_sets"]]
    entry = compile_pattern(checks["entry"])
    events = []
    for diff in ws.diffs:
        for side, lines, path in (("added", diff.added, diff.path), ("removed", diff.removed, diff.old_path or diff.path)):
            for number, text in lines:
                if diff.is_comment(text):
                    continue
                if path == registry_path:
                    match = entry.match(text)
                    if match and name_pattern.match(match.group("name")):
                        events.append((match.group("name"), "registry", side, path, number, None))
                    continue
                for regex in reads:
                    for match in regex.finditer(text):
                        if name_pattern.match(match.group("name")):
                            events.append((match.group("name"), "read", side, path, number, None))
                for regex, suffixes in sets:
                    if suffixes and not path.endswith(suffixes):
                        continue
                    for match in regex.finditer(text):
                        if name_pattern.match(match.group("name")):
                            events.append((match.group("name"), "set", side, path, number, match.group("value").strip()))
    return sorted(set(events), key=lambda e: (e[0], e[3], e[4], e[1], e[2]))


def env_vars(ws):
    """Per variable: what the diff does with it, its registration at base and head, readers at head."""
    registry_path = ws.surface["checks"]["env_vars"]["registry_path"]
    name_pattern = re.compile(ws.settings["env_name"])
    registered_prefix = re.compile(ws.surface["checks"]["env_vars"]["registered_prefix"])
    head_text = ws.reader.read(ws.head, registry_path) if ws.head else None
    base_text = ws.reader.read(ws.base, registry_path) if ws.base else None
    head_reg, base_reg = registry(head_text), registry(base_text)
    events = _events(ws, name_pattern, registry_path)
    names = sorted({e[0] for e in events})
    registry_changed = any(diff.path == registry_path for diff in ws.diffs)
    if registry_changed and head_reg is not None and base_reg is not None:
        names = sorted(set(names) | {n for n in set(head_reg) & set(base_reg)
                                     if head_reg[n]["default"] != base_reg[n]["default"]})
    readers = _readers(ws, names, registry_path) if ws.searchable else None
    result, flags = {}, []
    for name in names:
        mine = [e for e in events if e[0] == name]
        head = (head_reg or {}).get(name)
        base = (base_reg or {}).get(name)
        result[name] = {
            "uses": [{"kind": k, "side": s, "path": p, "line": n, **({"value": v} if v is not None else {})}
                     for _, k, s, p, n, v in mine],
            "base": base if base_reg is not None else "unknown",
            "head": head if head_reg is not None else "unknown",
            "readers_at_head": readers.get(name) if readers is not None else "unknown",
        }
        flags += _flags(name, mine, base, head, base_reg, head_reg, head_text, registry_path, registered_prefix)
    return result, flags


def _flags(name, mine, base, head, base_reg, head_reg, head_text, registry_path, registered_prefix):
    flags = []
    for _, kind, side, path, number, value in mine:
        if kind == "set" and side == "added" and head and _same_value(value, head["default"]):
            flags.append(flag("ENV-REDUNDANT-DEFAULT", path, number,
                              f"{name} set to {value}, which is its default ({head['default']}) in {registry_path}"))
    if head_reg is not None and registered_prefix.match(name) and head is None:
        read = next((e for e in mine if e[1] == "read" and e[2] == "added"), None)
        if read:
            flags.append(flag("ENV-UNREGISTERED", read[3], read[4], f"{name} is read but not registered in {registry_path}"))
    if base and head is None and head_reg is not None and not re.search(rf"\b{name}\b", head_text or ""):
        flags.append(flag("ENV-REMOVED", registry_path, None,
                          f"{name} (registered at base {registry_path}:{base['line']}) is gone at head with no "
                          "deprecation left behind"))
    if base and head and base["default"] != head["default"]:
        flags.append(flag("ENV-DEFAULT-CHANGED", registry_path, head["line"],
                          f"{name} default {base['default']} -> {head['default']}"))
    return flags


def _readers(ws, names, registry_path):
    """{name: {"total", "sites"}}: lines reading each variable at head, outside the registry."""
    cap = ws.settings["readers_per_variable"]
    found = {name: [] for name in names}
    if not names:
        return {}
    words = word_finder(names)
    for path, line, text in ws.reader.grep_words(ws.head, names, ["*.py"]):
        if path == registry_path:
            continue
        for name in sorted(set(words.findall(text))):
            found[name].append(f"{path}:{line}")
    return {name: {"total": len(sites), "sites": sites[:cap]} for name, sites in found.items()}
