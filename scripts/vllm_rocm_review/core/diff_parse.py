"""Split a PR's unified diff into per-file added, removed and context lines, once.

Everything in triage reads changed lines from here. The PR document's ``diff`` is the
source; when it is empty (GitHub refused the full diff), the per-file ``files[].patch``
hunks are used instead. ``files[]`` is authoritative for status and renames, and files
without any hunk (binary, too large) still appear, with no lines.
"""

import re
from dataclasses import dataclass, field

DIFF_HEADER = re.compile(r"^diff --git a/(.+?) b/(.+)$")
HUNK_HEADER = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")
WHITESPACE = re.compile(r"\s+")
URL = re.compile(r"\b[a-z][a-z0-9+.-]*://\S+", re.IGNORECASE)
STRING_LITERAL = r"(?P<string>\"(?:\\.|[^\"\\])*(?:\"|$)|'(?:\\.|[^'\\])*(?:'|$))"
# A string literal, or the line comment that ends the code (one pattern per comment syntax).
STRING_OR_COMMENT = {
    "#": re.compile(STRING_LITERAL + r"|(?P<comment>#)"),
    "//": re.compile(STRING_LITERAL + r"|(?P<comment>//)"),
    None: re.compile(STRING_LITERAL),
}

# Line-comment prefixes by file suffix: language syntax, used to skip comment-only lines.
HASH_COMMENT_SUFFIXES = (".py", ".pyi", ".sh", ".yaml", ".yml", ".toml", ".cfg", ".txt", ".cmake",
                         "Dockerfile", ".in", ".hcl")
SLASH_COMMENT_SUFFIXES = (".c", ".cc", ".cpp", ".cu", ".cuh", ".h", ".hpp", ".hip", ".cxx")


@dataclass
class FileDiff:
    """One changed file. ``added``, ``removed`` and ``context`` hold (line number, text) pairs.

    Added and context lines carry their number in the new file, removed lines their number
    in the old file; the text has the leading ``+``/``-``/space stripped. ``hunk_sections``
    holds (new start line, text after the second ``@@``), usually the enclosing def;
    ``hunks`` holds each hunk's lines in diff order as (marker, text), marker ``+``, ``-`` or `` ``.
    """

    path: str
    old_path: str | None = None
    status: str = "modified"
    added: list = field(default_factory=list)
    removed: list = field(default_factory=list)
    context: list = field(default_factory=list)
    hunk_sections: list = field(default_factory=list)
    hunks: list = field(default_factory=list)
    has_hunks: bool = False

    def line_comment(self):
        """The line-comment prefix of this file's language (``#`` or ``//``), or None."""
        name = self.path.rsplit("/", 1)[-1]
        if name.endswith(SLASH_COMMENT_SUFFIXES):
            return "//"
        if name.endswith(HASH_COMMENT_SUFFIXES) or name.startswith("Dockerfile"):
            return "#"
        return None

    def is_comment(self, text):
        """True when the line is only a comment in this file's language."""
        stripped = text.lstrip()
        prefix = self.line_comment()
        if not stripped or prefix is None:
            return False
        return stripped.startswith(("//", "/*", "*") if prefix == "//" else "#")

    def mask_strings(self, text):
        """``text`` with string literals and URLs blanked out, and where its trailing comment starts.

        Blanking keeps every position, so a match in the masked text is a match in ``text``.
        Quote-aware on one line only: the inside of a multi-line string is not recognised.
        """
        masked = URL.sub(_blank, text) if "://" in text else text
        tokens = STRING_OR_COMMENT[self.line_comment()]
        comment_start = len(text)
        parts, position = [], 0
        for match in tokens.finditer(masked):
            if match.lastgroup == "comment":
                comment_start = match.start()
                break
            parts += [masked[position:match.start()], " " * (match.end() - match.start())]
            position = match.end()
        if not parts:
            return masked, comment_start
        return "".join(parts) + masked[position:], comment_start

    def code_match(self, regex, text):
        """The first match of ``regex`` outside string literals and URLs whose literal is not in a comment.

        The literal is the first capture group that took part in the match, else the whole
        match: a pattern may require context (``fp8 ... 448``, the context may sit in a
        trailing comment) and still be judged by where the number is.
        """
        if regex.search(text) is None:  # blanking never adds a match: skip the masking
            return None
        masked, comment_start = self.mask_strings(text)
        for match in regex.finditer(masked):
            if literal_span(match)[0] < comment_start:
                return match
        return None

    def new_view(self):
        """Added and context lines merged in new-file order: (number, text, is_added)."""
        view = [(number, text, True) for number, text in self.added]
        view += [(number, text, False) for number, text in self.context]
        view.sort(key=lambda item: item[0])
        return view


def _blank(match):
    return " " * (match.end() - match.start())


def literal_span(match):
    """Span of the first capture group that took part in ``match``, else of the whole match."""
    for group in range(1, match.re.groups + 1):
        if match.start(group) >= 0:
            return match.span(group)
    return match.span()


def normalize(text):
    """Whitespace-insensitive form of a line, to recognise lines moved verbatim."""
    return WHITESPACE.sub(" ", text).strip()


def parse_diff(text):
    """Parse a ``git diff`` text into FileDiff objects, in diff order."""
    files = []
    current = None
    lines = text.split("\n")
    index = 0
    while index < len(lines):
        line = lines[index]
        header = DIFF_HEADER.match(line)
        if header:
            current = FileDiff(path=header.group(2), old_path=header.group(1))
            files.append(current)
            index += 1
            continue
        if current is None:
            index += 1
            continue
        if line.startswith("@@"):
            index = _read_hunk(lines, index, current)
            continue
        _read_header_line(line, current)
        index += 1
    for diff in files:
        if diff.status != "renamed" and diff.old_path == diff.path:
            diff.old_path = None
    return files


def parse_patch(path, patch, status="modified", old_path=None):
    """Parse one GitHub ``files[].patch`` (hunks only, no git header)."""
    diff = FileDiff(path=path, old_path=old_path, status=status)
    lines = patch.split("\n")
    index = 0
    while index < len(lines):
        if lines[index].startswith("@@"):
            index = _read_hunk(lines, index, diff)
        else:
            index += 1
    return diff


def diff_from_document(document):
    """Per-file diffs of a PR document: ``diff`` text first, ``files[].patch`` as fallback."""
    entries = {entry["filename"]: entry for entry in document.get("files") or []}
    text = document.get("diff") or ""
    if text.strip():
        parsed = parse_diff(text)
    else:
        parsed = [parse_patch(name, entry["patch"], entry.get("status", "modified"), entry.get("previous_filename"))
                  for name, entry in entries.items() if entry.get("patch")]
    by_path = {diff.path: diff for diff in parsed}
    for name, entry in entries.items():
        diff = by_path.get(name)
        if diff is None:
            diff = FileDiff(path=name)
            by_path[name] = diff
            parsed.append(diff)
        diff.status = entry.get("status") or diff.status
        if entry.get("previous_filename"):
            diff.old_path = entry["previous_filename"]
    return parsed


def _read_header_line(line, diff):
    if line.startswith("new file mode"):
        diff.status = "added"
    elif line.startswith("deleted file mode"):
        diff.status = "removed"
    elif line.startswith("rename from "):
        diff.status = "renamed"
        diff.old_path = line[len("rename from "):]
    elif line.startswith("rename to "):
        diff.path = line[len("rename to "):]
    elif line.startswith("+++ b/"):
        diff.path = line[len("+++ b/"):]


def _read_hunk(lines, index, diff):
    """Consume one hunk starting at ``lines[index]``; return the index after it.

    Line counts from the hunk header decide where the hunk ends, so a removed line that
    itself starts with ``--`` is never mistaken for a file header.
    """
    match = HUNK_HEADER.match(lines[index])
    index += 1
    if not match:
        return index
    diff.has_hunks = True
    diff.hunk_sections.append((int(match.group(3)), lines[index - 1][match.end():].strip()))
    hunk = []
    diff.hunks.append(hunk)
    old_line = int(match.group(1))
    old_left = int(match.group(2)) if match.group(2) is not None else 1
    new_line = int(match.group(3))
    new_left = int(match.group(4)) if match.group(4) is not None else 1
    while index < len(lines) and (old_left > 0 or new_left > 0):
        line = lines[index]
        marker = line[:1]
        if marker in "+- " or line == "":
            hunk.append((marker or " ", line[1:]))
        if marker == "+":
            diff.added.append((new_line, line[1:]))
            new_line += 1
            new_left -= 1
        elif marker == "-":
            diff.removed.append((old_line, line[1:]))
            old_line += 1
            old_left -= 1
        elif marker == " " or line == "":
            diff.context.append((new_line, line[1:]))
            old_line += 1
            new_line += 1
            old_left -= 1
            new_left -= 1
        elif marker != "\\":
            break
        index += 1
    while index < len(lines) and lines[index].startswith("\\"):
        index += 1
    return index
