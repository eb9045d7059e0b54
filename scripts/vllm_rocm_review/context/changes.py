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
    """Same-named methods and class attributes across each twin family, and the flags they raise."""
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
    result, flags = [], []
    for (family_id, name), entries in sorted(members.items()):
        family_dir = next(f["dir"] for f in families if f["id"] == family_id)
        changed = sorted({e["path"] for e in entries})
        others = [(p, n) for p, n in definers.get(name, []) if p.startswith(family_dir + "/") and p not in changed]
        unchanged = [f"{p}:{n}" for p, n in sorted(others)]
        resigned = [e for e in entries if e["signature_changed"]]
        result.append({"family": family_id, "name": name, "changed_in": changed,
                       "signature_changed_in": sorted({e["path"] for e in resigned}), "unchanged_twins": unchanged})
        touched_files = {diff.path for diff in ws.diffs}
        left_in_touched = [t for t in unchanged if t.rsplit(":", 1)[0] in touched_files]
        if (resigned and unchanged) or left_in_touched:
            shown = left_in_touched or unchanged
            why = ("its signature changes in " + ", ".join(sorted({e["path"] for e in resigned}))
                   if resigned else f"the PR changes it in {len(changed)} file(s)")
            where = "in files the PR also edits" if left_in_touched else "elsewhere in the family"
            flags.append(flag("TWIN-DIVERGES", changed[0], (entries[0]["head"] or entries[0]["base"])["start"],
                              f"{name} ({family_id}): {why}, but not in {len(shown)} twin(s) {where}: "
                              + ", ".join(shown[:3]) + (" …" if len(shown) > 3 else "")))
    return result, flags


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
