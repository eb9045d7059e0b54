"""The code map (outputs/pr-N-code.md): the code every review lens reads first, gathered once.

Each lens of a deep review used to re-open the same files. The map puts on one page, ordered
by file: each changed definition's text at head (the base beside it when modified), the call
lines of its callers at head, its twins' text, and the pinned upstream definitions it calls;
for C++/CUDA, YAML and module-level Python, the changed hunks with head lines around them.
A line cap keeps the page readable: blocks that do not fit are left out whole, and the map and
the pack JSON name each one (see ``code_map_render``, which lays out the page).
"""

import ast
import difflib
import re
from dataclasses import dataclass, field
from pathlib import Path

from . import symbols as sym
from .code_map_render import render_code_map
from .digest import COMMON_NAME_SITES
from .workspace import SKIPPED_PREFIXES
from .workspace import matches_any

NOT_BUILT = "not built"
PLATFORM_TWINS_KEY = "platform_twins"  # optional pack section: {name/method, path:line locations}
LOCATION = re.compile(r"^([\w./-]+\.py):(\d+)(?:-\d+)?$")  # path:line or path:start-end
MARKER_LINES = re.compile(r"  # lines \d+-\d+$")  # an elided definition's span, dropped before diffing
HUNK_RANGE = re.compile(r"^@@ -(\d+)(,\d+)? \+(\d+)(,\d+)? @@")
FENCE_LANGUAGES = {".py": "python", ".yaml": "yaml", ".yml": "yaml", ".cu": "cuda", ".cuh": "cuda",
                   ".h": "cpp", ".hpp": "cpp", ".cpp": "cpp", ".cc": "cpp", ".cxx": "cpp", ".c": "c", ".hip": "cpp"}


# Block kinds, in the order the cap keeps them (tests, docs, benchmarks and examples come last).
DEFINITION, HUNKS, TWINS = "definition", "hunks", "twins"
KEEP_ORDER = {DEFINITION: 0, HUNKS: 1, TWINS: 2}


@dataclass
class Block:
    """One unit of the map: a definition, a run of hunks, or a definition's twins; kept or cut whole."""

    path: str
    name: str
    start: int
    kind: str
    lines: list = field(default_factory=list)

    @property
    def is_test(self):
        return self.path.startswith(SKIPPED_PREFIXES)

    def keep_rank(self):
        """Lower is kept first."""
        return (len(KEEP_ORDER) if self.is_test else KEEP_ORDER[self.kind], self.path, self.start)

    def page_rank(self):
        """Where the block sits on the page: by file (tests last), then line, the twins after their definition."""
        return (self.is_test, self.path, self.start, KEEP_ORDER[self.kind])


class CodeMap:
    """Builds the map once the pack's sections exist: ``build`` returns the pack's summary, ``text`` is the page."""

    def __init__(self, path, max_lines):
        self.path = str(path)
        self.max_lines = max_lines
        self.text = None

    def build(self, ws, pack):
        settings = ws.settings["code_map"]
        collector = _Collector(ws, pack, settings)
        blocks = collector.blocks()
        self.text, kept, cut = render_code_map(pack, blocks, collector.missing, collector.unmapped, settings,
                                               self.max_lines)
        return {
            "path": self.path,
            "max_lines": self.max_lines,
            "lines": len(self.text.splitlines()),
            "definitions": sum(1 for b in kept if b.kind == DEFINITION),
            "hunks": sum(1 for b in kept if b.kind == HUNKS),
            "twins": sum(1 for b in kept if b.kind == TWINS),
            "cut": [{"path": b.path, "name": b.name, "lines": len(b.lines)} for b in cut],
            "missing": collector.missing,
            "not_mapped": collector.unmapped,
        }


class _Collector:
    def __init__(self, ws, pack, settings):
        self.ws, self.pack, self.settings = ws, pack, settings
        self.sources_only = pack["meta"]["mode"] != "checkout"
        self.missing = []
        self.unmapped = []
        if self.sources_only:
            self.missing = ["base text and base→head diffs (no checkout: every definition is shown at head only)",
                            "callers (no checkout at head)", "twins (no checkout at head)"]
        if "symbols" not in pack["upstream"]:
            self.missing.append("pinned upstream definitions (section 5 not collected)")
        self._callers = _callers_by_symbol(pack["callers"])
        self._twins = _twins_by_symbol(pack)
        self._upstream = {}
        for entry in pack["upstream"].get("symbols") or []:
            path, _, line = entry["called_at"].rpartition(":")
            self._upstream.setdefault(path, []).append((int(line), entry))
        self._other_files = {}

    def blocks(self):
        named = {(e["path"], e["qualname"]): e for e in self.pack["symbols"]}
        entries = [e for e in self.pack["symbols"] if not _shown_by_owner(e, named)]
        by_path = {}
        for entry in entries:
            by_path.setdefault(entry["path"], []).append(entry)
        result = []
        for diff in self.ws.diffs:
            defs = by_path.get(diff.path, [])
            for entry in defs:
                result.append(self._definition(entry, defs))
                twins = self._twins_of(entry)
                if twins:
                    result.append(twins)
            if diff.path.endswith(".py"):
                if diff.status != "removed" and diff.path not in self.ws.head_defs and diff.has_hunks:
                    why = "does not parse" if diff.path in self.ws.head_texts else "no head text (not downloaded)"
                    self.missing.append(f"definitions of {diff.path}: {why}; its hunks are shown instead")
                result += self._hunks(diff, defs)
            elif matches_any(diff.path, self.settings["hunk_globs"]):
                result += self._hunks(diff)
            elif diff.has_hunks:
                self.unmapped.append(diff.path)
        result.sort(key=Block.page_rank)
        return result

    # --- definitions --------------------------------------------------------------------------

    def _definition(self, entry, siblings):
        ws, path = self.ws, entry["path"]
        side = entry["head"] or entry["base"]
        change = "changed, base unknown" if self.sources_only and entry["change"] == "added" else entry["change"]
        span = f"{side['start']}-{side['end']}"
        where = f"{path}:{span}" if entry["head"] else f"{entry['base_path']}:{span} (base)"
        block = Block(path, entry["qualname"], side["start"], DEFINITION)
        lines = block.lines
        lines.append(f"### {entry['qualname']} [{entry['kind']}, {change}] {where}")
        nested_head = [e["head"] for e in siblings if e is not entry and e["head"]]
        nested_base = [e["base"] for e in siblings if e is not entry and e["base"]]
        head = base = None
        if entry["head"]:
            head = _definition_lines(ws.head_texts.get(path), ws.head_defs.get(path, []), entry, "head", nested_head)
        if entry["base"]:
            base = _definition_lines(ws.base_texts.get(entry["base_path"]), ws.base_defs.get(entry["base_path"], []),
                                     entry, "base", nested_base)
        language = _language(path)
        long_class = entry["kind"] == "class" and len(head or []) > self.settings["base_in_full_up_to"]
        if head and base and long_class:
            lines += self._outline_diff(base, head)
        elif head:
            title = "head (class outline: methods as one line each):" if entry["kind"] == "class" else "head:"
            lines += [title, f"```{language}", *_numbered(head), "```"]
            if base:
                lines += self._base_view(entry, base, head, language)
        elif base:
            lines += ["base (removed at head):", f"```{language}", *_numbered(base), "```"]
        lines += self._callers_of(entry)
        if entry["head"]:
            outer = entry["head"]
            inner = [n for n in nested_head if outer["start"] < n["start"] and n["end"] <= outer["end"]]
            lines += self._upstream_in(path, outer, inner)
        return block

    def _base_view(self, entry, base, head, language):
        """The base in full when short or when its diff would be as long; else the base→head diff."""
        diff = self._diff(base, head)
        if not diff:
            return ["base: same text (the change is in lines shown in their own block)"]
        if len(base) <= self.settings["base_in_full_up_to"] or len(diff) >= len(base):
            where = entry["base_path"] + ":" + str(entry["base"]["start"])
            return [f"base ({where}):", f"```{language}", *_numbered(base), "```"]
        return [f"base→head diff ({len(base)} lines at base, file line numbers):", "```diff", *diff, "```"]

    def _outline_diff(self, base, head):
        """A long class: only the base→head diff of its outline (its changed methods have their own blocks)."""
        diff = self._diff(base, head)
        changed = [line[1:] for line in diff if line[:1] in "+-" and not line.startswith("@@")]
        if all(not text.strip() for text in changed):
            return ["class outline: unchanged but for blank lines and the methods shown in their own blocks"]
        return [f"class outline, base→head diff ({len(head)} lines at head, methods as one line each):", "```diff",
                *diff, "```"]

    def _diff(self, base, head):
        """Unified diff lines of two numbered texts, hunk headers in file line numbers ([] when equal)."""
        base_text = [MARKER_LINES.sub("", text) for _, text in base]
        head_text = [MARKER_LINES.sub("", text) for _, text in head]
        if base_text == head_text:
            return []
        diff = list(difflib.unified_diff(base_text, head_text, lineterm="", n=self.settings["diff_context"]))[2:]
        return [_shift_hunk_header(line, base[0][0] - 1, head[0][0] - 1) for line in diff]

    def _callers_of(self, entry):
        if self.pack["callers"] is None:
            return []
        found = self._callers.get(f"{entry['path']}:{entry['qualname']}")
        if found is None:
            return []
        name, info = found
        if info["total"] > COMMON_NAME_SITES:
            return [f"callers of {name}: {info['total']} sites at head, too common a name to list"]
        if not info["total"]:
            return [] if entry["path"].startswith(SKIPPED_PREFIXES) else [f"callers of {name}: none at head"]
        lines = [f"callers of {name} at head ({info['total']}, {info['outside_diff']} outside the diff):"]
        lines += [f"- {s['path']}:{s['line']}{' (in diff)' if s['in_diff'] else ''}  {s['text']}"
                  for s in info["sites"]]
        if info["more"]:
            lines.append(f"- … {info['more']} more (the pack keeps callers_per_symbol sites)")
        return lines

    def _twins_of(self, entry):
        """A block of the definition's twins: the first few as text, the rest as path:line."""
        twins = self._twins.get((entry["path"], entry["qualname"].rsplit(".", 1)[-1]))
        if not twins:
            return None
        side = entry["head"] or entry["base"]
        block = Block(entry["path"], f"twins of {entry['qualname']}", side["start"], TWINS)
        block.lines.append(f"#### twins of {entry['qualname']} ({len(twins)})")
        shown = 0
        for family, location in twins:
            path, _, line = location.rpartition(":")
            text = self._twin_text(path, int(line)) if shown < self.settings["twins_with_text"] else None
            if text and len(text) <= self.settings["twin_max_lines"]:
                shown += 1
                block.lines += [f"{family}: {path}:{text[0][0]}-{text[-1][0]}", f"```{_language(path)}",
                                *_numbered(text), "```"]
            else:
                block.lines.append(f"{family}: {location}")
        return block

    def _twin_text(self, path, line):
        """(number, text) of the definition holding ``line`` in a file at head, the file parsed once."""
        if path not in self._other_files:
            text = self.ws.reader.read_many(self.ws.head, [path]).get(path) if self.ws.head else None
            tree = sym.parse_python(text) if text else None
            self._other_files[path] = (text.split("\n"), sym.definitions(tree)) if tree else None
        parsed = self._other_files[path]
        found = sym.innermost(parsed[1], line) if parsed else None
        if found is None:
            return None
        return [(n, parsed[0][n - 1]) for n in range(found.start, found.end + 1)]

    def _upstream_in(self, path, span, inner):
        """The upstream definitions called in ``span``, except in the ``inner`` blocks (they show their own)."""
        lines = []
        for line, entry in self._upstream.get(path, []):
            if span["start"] <= line <= span["end"] and not any(n["start"] <= line <= n["end"] for n in inner):
                lines += _upstream_lines(entry, self.settings["upstream_max_lines"])
        return lines

    # --- hunks ----------------------------------------------------------------------------------

    def _hunks(self, diff, shown_apart=()):
        """Runs of hunks holding a changed line outside ``shown_apart`` (entries with their own block),
        widened by head context; one block per run. Rows inside those entries fold to one line."""
        head_lines = self._head_lines(diff)
        context = self.settings["hunk_context"]
        removed = iter(diff.removed)
        runs = []
        for (first, section), hunk in zip(diff.hunk_sections, diff.hunks):
            rows, number, keep = [], first, False
            for marker, text in hunk:
                if marker == "-":
                    base_number = next(removed)[0]
                    rows.append((None, "-", text, _holder(base_number, "base", shown_apart)))
                    keep = keep or rows[-1][3] is None
                else:
                    rows.append((number, marker, text, _holder(number, "head", shown_apart)))
                    keep = keep or (marker == "+" and rows[-1][3] is None)
                    number += 1
            if not keep:
                continue
            if runs and runs[-1]["last"] + context >= first - context - 1:
                runs[-1]["rows"] += _head_rows(head_lines, runs[-1]["last"] + 1, first - 1, shown_apart) + rows
            else:
                if runs:
                    runs[-1]["rows"] += _head_rows(head_lines, runs[-1]["last"] + 1, runs[-1]["last"] + context,
                                                   shown_apart)
                runs.append({"rows": _head_rows(head_lines, first - context, first - 1, shown_apart) + rows,
                             "sections": []})
            runs[-1]["last"] = number - 1
            runs[-1]["sections"].append(section)
        if runs:
            runs[-1]["rows"] += _head_rows(head_lines, runs[-1]["last"] + 1, runs[-1]["last"] + context, shown_apart)
        return [self._hunk_block(diff, run) for run in runs]

    def _head_lines(self, diff):
        text = self.ws.head_texts.get(diff.path)
        if text is None and diff.status != "removed" and self.ws.head:
            text = self.ws.reader.read_many(self.ws.head, [diff.path]).get(diff.path)
        return text.splitlines() if text else []

    def _hunk_block(self, diff, run):
        rows = run["rows"]
        numbered = [row[0] for row in rows if row[0] is not None and row[3] is None]
        span = f"{numbered[0]}-{numbered[-1]}" if numbered else "removed lines"
        sections = sorted({s for s in run["sections"] if s})
        name = f"hunks {span}" + (f" ({'; '.join(sections)[:80]})" if sections else "")
        block = Block(diff.path, name, numbered[0] if numbered else 0, HUNKS)
        block.lines += [f"### {diff.path} {name} [{diff.status}]", f"```{_language(diff.path)}",
                        *_fold(rows), "```"]
        if numbered:
            block.lines += self._upstream_outside(diff.path, numbered[0], numbered[-1])
        return block

    def _upstream_outside(self, path, start, end):
        """Upstream symbols used on module-level lines of this run (definitions carry their own)."""
        defs = [e["head"] for e in self.pack["symbols"] if e["path"] == path and e["head"]]
        lines = []
        for line, entry in self._upstream.get(path, []):
            if start <= line <= end and not any(d["start"] <= line <= d["end"] for d in defs):
                lines += _upstream_lines(entry, self.settings["upstream_max_lines"])
        return lines


def _shown_by_owner(entry, named):
    """Shown inside another block: a class attribute of a class with a block (its outline shows
    it), or a function nested in a changed function (a closure reads best in place)."""
    parts = entry["qualname"].split(".")
    if entry["kind"] == "attribute":
        return (entry["path"], ".".join(parts[:-1])) in named
    owners = [named.get((entry["path"], ".".join(parts[:cut]))) for cut in range(1, len(parts))]
    return any(owner is not None and owner["kind"] == "function" for owner in owners)


def _head_rows(head_lines, start, end, shown_apart):
    """Context rows for head lines ``start``..``end`` (clipped to the file)."""
    return [(n, " ", head_lines[n - 1], _holder(n, "head", shown_apart))
            for n in range(max(1, start), min(end, len(head_lines)) + 1)]


def _holder(number, side, entries):
    """The innermost changed definition holding a line (``side`` numbering), or None."""
    holding = [e for e in entries if e[side] and e[side]["start"] <= number <= e[side]["end"]]
    return max(holding, key=lambda e: e[side]["start"])["qualname"] if holding else None


def _fold(rows):
    """Numbered diff rows; rows inside a definition with its own block become one line."""
    lines, previous = [], None
    for number, marker, text, holder in rows:
        if holder is None:
            lines.append(f"{'' if number is None else number:>5} {marker} {text}")
        elif holder != previous:
            lines.append(f"{'':>5}   … {holder}: its own block")
        previous = holder
    return lines


def _language(path):
    return FENCE_LANGUAGES.get(Path(path).suffix, "")


def _numbered(rows):
    return [f"{number:>5}  {text}" for number, text in rows]


def _shift_hunk_header(line, offset_base, offset_head):
    match = HUNK_RANGE.match(line)
    if not match:
        return line
    return (f"@@ -{int(match.group(1)) + offset_base}{match.group(2) or ''} "
            f"+{int(match.group(3)) + offset_head}{match.group(4) or ''} @@")


def _definition_lines(text, defs, entry, side, nested):
    """(line number, text) of a definition; a class as its outline, nested blocks elided to one line."""
    span = entry[side]
    if not text or not span:
        return None
    source = text.split("\n")
    if entry["kind"] == "class":
        holes = [(d.start, d.end, d.signature) for d in defs
                 if d.kind in ("function", "class") and span["start"] < d.start and d.end <= span["end"]
                 and d.qualname.count(".") == entry["qualname"].count(".") + 1]
    else:
        holes = [(n["start"], n["end"], n["signature"]) for n in nested
                 if span["start"] < n["start"] and n["end"] <= span["end"]]
    rows, number = [], span["start"]
    while number <= span["end"] and number <= len(source):
        hole = next((h for h in holes if h[0] == number), None)
        if hole:
            indent = source[number - 1][:len(source[number - 1]) - len(source[number - 1].lstrip())]
            rows.append((number, f"{indent}{hole[2]}: …  # lines {hole[0]}-{hole[1]}"))
            number = hole[1] + 1
            continue
        rows.append((number, source[number - 1]))
        number += 1
    return rows


def _upstream_lines(entry, max_lines):
    via = f" via {entry['via']}" if entry.get("via") else ""
    title = f"upstream {entry['symbol']}{via} ← {entry['called_at']}"
    if entry["status"] != "found":
        trail = f" (trail ends at {entry['path']}:{entry['line']})" if entry.get("path") else ""
        return [f"{title}: {entry['status']}{trail}"]
    where = f"{entry['repo']}@{entry['ref']}:{entry['path']}:{entry['line']}"
    text = _saved_definition(entry.get("saved"), entry["line"])
    if text is None:
        return [f"{title}: {where}; text not saved ({entry.get('saved') or 'no saved file'}); {entry['signature']}"]
    shown = text[:max_lines]
    lines = [f"{title}: {where}", f"```{_language(entry['path'])}", *_numbered(shown), "```"]
    if len(text) > len(shown):
        lines.append(f"… {len(text) - len(shown)} more lines in {entry['saved']}")
    return lines


def _saved_definition(saved, line):
    """(number, text) of the definition starting at ``line`` in a saved upstream file, or None."""
    if not saved:
        return None
    try:
        text = Path(saved).read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    tree = sym.parse_python(text)
    source = text.split("\n")
    node = next((n for n in ast.walk(tree) if getattr(n, "lineno", None) == line and hasattr(n, "end_lineno")
                 and isinstance(n, ast.stmt)), None) if tree else None
    if node is None:
        return [(line, source[line - 1])] if 0 < line <= len(source) else None
    start = min([node.lineno] + [d.lineno for d in getattr(node, "decorator_list", [])])
    return [(n, source[n - 1]) for n in range(start, node.end_lineno + 1)]


def _callers_by_symbol(callers):
    """{"path:qualname": (name, info)} from the pack's callers section."""
    found = {}
    for name, info in (callers or {}).items():
        for symbol in info["symbols"]:
            found[symbol] = (name, info)
    return found


def _twins_by_symbol(pack):
    """{(changed path, name): [(family, "path:line")]} from the twins section and any platform twins."""
    found = {}
    for twin in pack["twins"] or []:
        for path in twin["changed_in"]:
            found.setdefault((path, twin["name"]), []).extend((twin["family"], loc) for loc in twin["unchanged_twins"])
    for twin in pack.get(PLATFORM_TWINS_KEY) or []:
        if not isinstance(twin, dict):
            continue
        name = twin.get("name") or twin.get("method")
        matches = [LOCATION.match(value) for value in twin.values() if isinstance(value, str)]
        locations = [(match.group(1), f"{match.group(1)}:{match.group(2)}") for match in matches if match]
        for path, _ in locations:
            found.setdefault((path, name), []).extend(("platform", loc) for other, loc in locations if other != path)
    return found
