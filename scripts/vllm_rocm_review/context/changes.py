"""Sections 1-3 of the pack: changed symbols, their callers at head, and their twins in a family."""

import re

from . import symbols as sym
from .workspace import flag

MIN_NAME_LENGTH = 3
DEFINITION = re.compile(r"\s*(?:async\s+)?(?:def|class)\s+(\w+)")


def word_finder(words):
    """One regex finding any of ``words`` as a whole word (longest first, so no word hides another)."""
    return re.compile(r"\b(" + "|".join(re.escape(w) for w in sorted(words, key=lambda w: (-len(w), w))) + r")\b")


def changed_symbols(ws):
    """Each definition a hunk touches, with its span and signature at base and head."""
    entries = []
    for diff in ws.diffs:
        if not diff.path.endswith(".py"):
            continue
        base_path = diff.old_path or diff.path
        head_defs = ws.head_defs.get(diff.path, [])
        base_defs = ws.base_defs.get(base_path, [])
        head_hit = sym.touched(head_defs, [number for number, _ in diff.added])
        base_hit = sym.touched(base_defs, [number for number, _ in diff.removed])
        head_by_name = {d.qualname: d for d in head_defs}
        base_by_name = {d.qualname: d for d in base_defs}
        for qualname in set(head_hit) | set(base_hit):
            head = head_hit.get(qualname) or head_by_name.get(qualname)
            base = base_hit.get(qualname) or base_by_name.get(qualname)
            entries.append({
                "path": diff.path,
                "base_path": base_path if base else None,
                "qualname": qualname,
                "kind": (head or base).kind,
                "change": "added" if base is None else "removed" if head is None else "modified",
                "base": _side(base_path, base),
                "head": _side(diff.path, head),
                "signature_changed": bool(base and head and base.signature != head.signature),
            })
    entries.sort(key=lambda e: (e["path"], (e["head"] or e["base"])["start"], e["qualname"]))
    return entries


def _side(path, definition):
    if definition is None:
        return None
    return {"span": sym.span(path, definition), "start": definition.start, "end": definition.end,
            "signature": definition.signature}


def _call_name(entry):
    """The name callers use for a changed symbol, or None when a search would only find noise."""
    name = entry["qualname"].rsplit(".", 1)[-1]
    if name == "__init__" and "." in entry["qualname"]:
        name = entry["qualname"].rsplit(".", 2)[-2]
    if name.startswith("__") or len(name) < MIN_NAME_LENGTH:
        return None
    if entry["kind"] == "attribute" and entry["change"] != "removed":
        return None
    return name


def callers(ws, symbols):
    """Where each changed, added or removed symbol is used at head (one git grep for all names).

    A removed function or class attribute still named at head is a place the removal breaks.
    """
    names = {}
    for entry in symbols:
        name = _call_name(entry)
        if name:
            names.setdefault(name, []).append(f"{entry['path']}:{entry['qualname']}")
    if not names:
        return {}
    cap = ws.settings["callers_per_symbol"]
    added = ws.added_lines()
    words = word_finder(names)
    sites = {name: [] for name in names}
    for path, line, text in ws.reader.grep_words(ws.head, list(names), ["*.py"]):
        defined = DEFINITION.match(text)
        for name in set(words.findall(text)):
            if defined and defined.group(1) == name:
                continue
            sites[name].append({"path": path, "line": line, "text": text.strip()[:120],
                                "in_diff": (path, line) in added})
    result = {}
    for name in sorted(names):
        found = sorted(sites[name], key=lambda s: (s["in_diff"], s["path"], s["line"]))
        result[name] = {"symbols": sorted(names[name]), "total": len(found),
                        "outside_diff": sum(1 for s in found if not s["in_diff"]),
                        "sites": found[:cap], "more": max(0, len(found) - cap)}
    return result


def twins(ws, symbols):
    """Same-named methods and class attributes in sibling classes of each twin family, and the flags they raise.

    A twin is the same name in a class that shares one of the family's ``contracts`` (interface base
    classes) with the changed class: unrelated classes that happen to share a name are not twins.
    TWIN-DIVERGES is raised for methods only, when the PR changes a method's signature and leaves
    twins alone, or changes it in two or more members and leaves it alone in a file it also edits.
    At most ``twin_flags_max`` flags, most telling first, each naming at most that many twins.
    """
    families = ws.settings["twin_families"]
    members = {}
    for entry in symbols:
        if "." not in entry["qualname"] or entry["kind"] == "class":
            continue
        family = next((f for f in families if entry["path"].startswith(f["dir"] + "/")), None)
        if family is not None:
            members.setdefault((family["id"], entry["qualname"].rsplit(".", 1)[-1]), []).append(entry)
    if not members:
        return [], []
    method_names = sorted({name for _, name in members})
    alternatives = "|".join(re.escape(name) for name in method_names)
    pattern = rf"^\s+((async\s+)?def\s+({alternatives})\s*\(|({alternatives})\s*(:[^=]*)?=([^=]|$))"
    dirs = [f["dir"] for f in families if any(key[0] == f["id"] for key in members)]
    definers = {}
    for path, line, text in ws.reader.grep_regex(ws.head, pattern, [f"{d}/*.py" for d in dirs]):
        match = re.match(pattern, text)
        name = match.group(3) or match.group(4)
        definers.setdefault(name, []).append((path, line))
    classes = _family_classes(ws, dirs)
    touched_files = {diff.path for diff in ws.diffs}
    limit = ws.settings["twin_flags_max"]
    result, ranked = [], []
    for (family_id, name), entries in sorted(members.items()):
        family = next(f for f in families if f["id"] == family_id)
        contracts = set(family.get("contracts") or [])
        owned = {_owner(e["qualname"]) for e in entries}
        shared = set().union(*(_ancestors(classes, owner) & contracts for owner in owned))
        entries = [e for e in entries if _ancestors(classes, _owner(e["qualname"])) & shared]
        changed = sorted({e["path"] for e in entries})
        others = [(p, n) for p, n in definers.get(name, []) if p.startswith(family["dir"] + "/")
                  and _enclosing_class(classes, p, n) not in owned
                  and _ancestors(classes, _enclosing_class(classes, p, n)) & shared]
        ranked_twins = sorted(others, key=lambda twin: (twin[0] not in touched_files, twin))
        unchanged = [f"{p}:{n}" for p, n in ranked_twins]
        resigned = [e for e in entries if e["signature_changed"]]
        result.append({"family": family_id, "name": name, "changed_in": changed,
                       "signature_changed_in": sorted({e["path"] for e in resigned}), "unchanged_twins": unchanged})
        methods = [e for e in entries if e["kind"] == "function" and e["change"] == "modified"]
        left_in_touched = [t for t in unchanged if t.rsplit(":", 1)[0] in touched_files]
        resigned = [e for e in resigned if e in methods]
        swept = len({e["path"] for e in methods}) >= 2
        if not methods or not ((resigned and unchanged) or (swept and left_in_touched)):
            continue
        shown = unchanged if resigned else left_in_touched
        why = ("its signature changes in " + ", ".join(sorted({e["path"] for e in resigned}))
               if resigned else f"the PR changes it in {len({e['path'] for e in methods})} file(s)")
        where = "in files the PR also edits" if shown[0].rsplit(":", 1)[0] in touched_files else "elsewhere in the family"
        entry = methods[0]
        message = (f"{name} ({family_id}): {why}, but not in {len(shown)} twin(s) of the same contract {where}: "
                   + ", ".join(shown[:limit]) + (" …" if len(shown) > limit else ""))
        ranked.append(((not resigned, -len(left_in_touched), -len(methods), entry["path"], name),
                       flag("TWIN-DIVERGES", entry["path"], entry["head"]["start"], message)))
    return result, [found for _, found in sorted(ranked, key=lambda item: item[0])[:limit]]


CLASS_HEADER = re.compile(r"^class\s+(\w+)\s*(?:\((?P<bases>[^)]*)\))?\s*:", re.M)


def _family_classes(ws, dirs):
    """The top-level classes of the family directories: ``by_path`` {path: [(line, name)]} and
    ``bases`` {name: [base class names]} (the last dotted part, without subscripts)."""
    paths = [p for p in ws.head_paths() if p.endswith(".py") and any(p.startswith(d + "/") for d in dirs)]
    by_path, bases = {}, {}
    for path, text in ws.reader.read_many(ws.head, paths).items():
        for match in CLASS_HEADER.finditer(text or ""):
            names = [re.sub(r"\[.*", "", base, flags=re.S).strip().rsplit(".", 1)[-1]
                     for base in _split_bases(match.group("bases") or "")]
            by_path.setdefault(path, []).append((text.count("\n", 0, match.start()) + 1, match.group(1)))
            bases.setdefault(match.group(1), []).extend(n for n in names if n and "=" not in n)
    return {"by_path": by_path, "bases": bases}


def _split_bases(text):
    """Top-level comma-separated parts of a base list (commas inside brackets stay)."""
    parts, depth, current = [], 0, ""
    for char in text:
        depth += 1 if char in "[(" else -1 if char in "])" else 0
        if char == "," and depth == 0:
            parts.append(current)
            current = ""
        else:
            current += char
    return parts + [current]


def _owner(qualname):
    return qualname.rsplit(".", 1)[0].rsplit(".", 1)[-1]


def _enclosing_class(classes, path, line):
    before = [name for start, name in classes["by_path"].get(path, []) if start <= line]
    return before[-1] if before else None


def _ancestors(classes, name):
    """``name`` and every base class name reachable from it through the family's classes."""
    bases = classes["bases"]
    seen, stack = set(), [name] if name else []
    while stack:
        current = stack.pop()
        if current not in seen:
            seen.add(current)
            stack.extend(bases.get(current, []))
    return seen


def capability_flags(ws, symbols):
    """CAPABILITY-UNIMPLEMENTED: a capability turned True in a class the PR adds no other code to."""
    capability = re.compile(ws.settings["capability_name"])
    added_by_path = {diff.path: [number for number, _ in diff.added] for diff in ws.diffs}
    flags = []
    for entry in symbols:
        name = entry["qualname"].rsplit(".", 1)[-1]
        owner = entry["qualname"].rsplit(".", 1)[0] if "." in entry["qualname"] else None
        head = entry["head"]
        if not head or not owner or not capability.match(name) or not _turns_true(ws, entry):
            continue
        cls = next((d for d in ws.head_defs.get(entry["path"], []) if d.qualname == owner and d.kind == "class"), None)
        if cls is None:
            continue
        other = [n for n in added_by_path.get(entry["path"], [])
                 if cls.start <= n <= cls.end and not head["start"] <= n <= head["end"]]
        if not other:
            flags.append(flag("CAPABILITY-UNIMPLEMENTED", entry["path"], head["start"],
                              f"{entry['qualname']} now advertises True, but the PR adds no other code to {owner}"))
    return flags


def _turns_true(ws, entry):
    """True when the head definition says True (a flag or ``return True``) and the base one did not."""
    def says_true(texts, path, side):
        text = texts.get(path)
        if not text or not side:
            return False
        body = "\n".join(text.split("\n")[side["start"] - 1:side["end"]])
        return bool(re.search(r"=\s*True\b|return\s+True\b", body))

    return says_true(ws.head_texts, entry["path"], entry["head"]) and not says_true(
        ws.base_texts, entry["base_path"], entry["base"])
