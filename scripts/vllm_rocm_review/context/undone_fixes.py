"""Undone fixes: lines the PR deletes that a recent fix commit wrote, and moved copies that lack them.

A refactor branched before a fix landed moves the old version of a block to another file; the
diff then deletes the fixed lines in one file and adds the unfixed ones in another. ``git blame``
at the base, limited to the deleted line ranges and to the recent past (``--since``), finds the
fix; a deleted fix line that the PR adds nowhere is a fix the PR may undo.
"""

import ast
import datetime
import re

from ..core.diff_parse import normalize
from . import symbols as sym
from .workspace import flag

DAY = 86400
TRIVIAL = re.compile(r"[\W_]*(\w+[\W_]*)?")  # at most one word: brackets, `else:`, `return`
# Lines that carry no logic of their own: a string piece, an import, a log call, a def or class header
# (a removed or re-signed function), one parameter or argument.
NOT_LOGIC = re.compile(r"""[rbfu]*["']|(from\s+\S+\s+)?import\s|((async\s+)?def|class)\s|(logger|logging|warnings)\.\w+\(|print\(|\*{0,2}\w+(\s*:\s*[^=]+)?(\s*=\s*[^,=]+)?,\s*$""")
SPACE = re.compile(r"\s+")
BLOCK_GAP = 3  # deleted lines closer than this belong to one block


def undone_fixes(ws):
    """(entries, flags): per recent fix commit and file, its deleted lines and whether the PR re-adds them."""
    settings = ws.settings["undone_fixes"]
    fix_subject = re.compile(settings["fix_subject"])
    not_a_fix = re.compile(settings["ignored_subject"])
    base_time = int(ws.reader.git("show", "-s", "--format=%ct", ws.base).stdout.decode().strip())
    since = base_time - settings["recent_days"] * DAY
    added_in = _AddedIndex(ws.diffs)
    entries = []
    for diff in ws.diffs:
        base_path = diff.old_path or diff.path
        in_strings = _string_lines(ws.base_texts.get(base_path))
        removed = [(number, text) for number, text in diff.removed
                   if number not in in_strings and _counts(diff, text)]
        if diff.status == "added" or not removed or base_path.startswith(tuple(settings["skip_prefixes"])):
            continue
        by_commit = {}
        for number, commit in _blame(ws.reader, ws.base, base_path, [n for n, _ in removed], since).items():
            subject = commit["subject"]
            if commit["time"] >= since and fix_subject.search(subject) and not not_a_fix.search(subject):
                by_commit.setdefault(commit["sha"], (commit, []))[1].append(number)
        texts = dict(removed)
        for commit, numbers in by_commit.values():
            lines = [{"line": n, "text": texts[n].strip()[:120], "re_added": sorted(added_in.get(texts[n]))}
                     for n in sorted(numbers) if n in texts]
            if lines:
                entries.append({"path": base_path, "file_removed": diff.status == "removed",
                                "commit": commit["sha"][:8], "subject": commit["subject"],
                                "date": commit["date"],
                                "moved_to": _moved_to(diff, numbers, added_in, ws.base_defs.get(base_path, [])),
                                "lines": lines})
    entries.sort(key=lambda e: (-sum(not line["re_added"] for line in e["lines"]), e["path"], e["lines"][0]["line"]))
    return entries[:settings["max_entries"]], [_flag(entry) for entry in entries if _undone(entry)]


def _counts(diff, text):
    """A deleted line that can carry a fix's logic: not blank, a comment, a string piece, an import or one name."""
    stripped = text.strip()
    return not diff.is_comment(text) and not TRIVIAL.fullmatch(stripped) and not NOT_LOGIC.match(stripped)


def _string_lines(text):
    """Line numbers inside multi-line string literals (docstrings) of a Python file; empty otherwise."""
    tree = sym.parse_python(text) if text else None
    if tree is None:
        return set()
    return {number for node in ast.walk(tree) if isinstance(node, ast.Constant) and isinstance(node.value, str)
            for number in range(node.lineno, node.end_lineno + 1) if node.end_lineno > node.lineno}


class _AddedIndex:
    """Where the PR adds a line back: verbatim, or inside re-wrapped added code (whitespace ignored)."""

    def __init__(self, diffs):
        self.lines = {}
        self.squashed = {}
        for diff in diffs:
            for _, text in diff.added:
                self.lines.setdefault(normalize(text), set()).add(diff.path)
            self.squashed[diff.path] = "".join(SPACE.sub("", text) for _, text in diff.added)

    def get(self, text, default=()):
        found = self.lines.get(normalize(text))
        if found:
            return found
        needle = SPACE.sub("", text)
        return {path for path, added in self.squashed.items() if needle and needle in added} or default


def _blame(reader, base, path, numbers, since):
    """{line: commit} for ``numbers`` of ``path`` at ``base``; lines older than ``since`` are left out.

    One ``git blame --porcelain`` with one ``-L`` per run of consecutive lines.
    """
    ranges = []
    for number in sorted(numbers):
        if ranges and number == ranges[-1][1] + 1:
            ranges[-1][1] = number
        else:
            ranges.append([number, number])
    args = [arg for start, end in ranges for arg in ("-L", f"{start},{end}")]
    done = reader.git("blame", "--porcelain", f"--since=@{since}", *args, base, "--", path, check=False)
    if done.returncode != 0:
        return {}
    commits, result, current = {}, {}, None
    for raw in done.stdout.decode("utf-8", "replace").split("\n"):
        if raw.startswith("\t") or not raw:
            continue
        head = raw.split(" ")
        if len(head) >= 3 and len(head[0]) == 40 and head[1].isdigit():
            current = commits.setdefault(head[0], {"sha": head[0], "subject": "", "time": 0, "date": "",
                                                   "boundary": False})
            result[int(head[2])] = current
        elif current is not None:
            key, _, value = raw.partition(" ")
            if key == "summary":
                current["subject"] = value
            elif key == "committer-time":
                current["time"] = int(value)
            elif key == "boundary":
                current["boundary"] = True
    for commit in commits.values():
        commit["date"] = _date(commit["time"])
    return {number: commit for number, commit in result.items() if not commit["boundary"]}


def _date(timestamp):
    return datetime.datetime.fromtimestamp(timestamp, datetime.timezone.utc).strftime("%Y-%m-%d")


def _moved_to(diff, numbers, added_in, base_defs):
    """The other file that re-adds at least half of the deleted block(s) holding ``numbers``, else None.

    In a Python file the block stops at the definition holding the first fix line, so a deleted
    region whose functions go to several files is judged function by function.
    """
    holder = sym.innermost([d for d in base_defs if d.kind != "attribute"], min(numbers))
    blocks = []
    for number, text in sorted(diff.removed):
        if holder is not None and not holder.start <= number <= holder.end:
            continue
        if not blocks or number - blocks[-1][-1][0] > BLOCK_GAP:
            blocks.append([])
        blocks[-1].append((number, text))
    wanted = set(numbers)
    texts = [text for block in blocks if wanted.intersection(n for n, _ in block)
             for _, text in block if not TRIVIAL.fullmatch(text.strip())]
    if len(texts) < 3:
        return None
    counts = {}
    for text in texts:
        for path in added_in.get(text, ()):
            if path != diff.path:
                counts[path] = counts.get(path, 0) + 1
    best = max(sorted(counts), key=counts.get, default=None)
    return best if best and counts[best] * 2 >= len(texts) else None


def _dropped(entry):
    return [line for line in entry["lines"] if not line["re_added"]]


def _undone(entry):
    """Most of the fix's deleted lines are added nowhere: the fix is gone, not re-wrapped or widened.

    A file the PR deletes without moving the block elsewhere is a feature leaving the tree, not an undone fix.
    """
    return 2 * len(_dropped(entry)) > len(entry["lines"]) and (entry["moved_to"] or not entry["file_removed"])


def _flag(entry):
    dropped = _dropped(entry)
    fix = f"fix {entry['commit']} ({entry['date']}) \"{entry['subject'][:70]}\""
    if entry["moved_to"]:
        why = f"the block moved to {entry['moved_to']} lacks {len(dropped)} line(s) of {fix}"
    else:
        why = f"deletes {len(dropped)} line(s) of {fix} and adds them nowhere"
    return flag("FIX-UNDONE", entry["path"], dropped[0]["line"],
                f"{why} (base line {dropped[0]['line']}: `{dropped[0]['text'][:60]}`)")
