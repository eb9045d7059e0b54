"""What each changed line of a diff sits inside, read from the hunks alone.

A PR document carries diff hunks, not whole files, so the blocks enclosing a changed line
are recovered from indentation: walking back through the hunk, every earlier line that is
less indented than everything seen so far opens a block around it (``class X:``, ``def f(``,
``if current_platform.is_cuda():``, ``from m import (``). When the walk ends above column 0,
the hunk header's section text (the enclosing top-level line git prints after ``@@``) is the
outermost block. Removed lines are read against the old side (context and removed lines),
added lines against the new side (context and added lines).
"""

from dataclasses import dataclass

IMPORT_STARTS = ("import ", "from ")
DOCSTRING_QUOTES = ('"""', "'''")
BLOCK_OPENERS = (":", "{", "(")
DEFINITIONS = ("def ", "async def ", "class ")
DISJUNCTIONS = (" or ", "||")


@dataclass(frozen=True)
class ChangedLine:
    """One added or removed line, the headers of the blocks around it (innermost first), and its kind."""

    marker: str
    text: str
    enclosing: tuple
    in_docstring: bool


def _indent(text):
    return len(text) - len(text.lstrip(" \t"))


def changed_lines(diff):
    """Every added and removed line of a FileDiff, with its enclosing block headers."""
    result = []
    for hunk, (_, section) in zip(diff.hunks, diff.hunk_sections):
        for side in "+-":
            lines = [(marker, text) for marker, text in hunk if marker in (side, " ")]
            docstring = _docstring_flags([text for _, text in lines])
            for position, (marker, text) in enumerate(lines):
                if marker == side:
                    result.append(ChangedLine(marker, text, _enclosing(lines, position, section),
                                              docstring[position]))
    return result


def _enclosing(lines, position, section):
    """Headers of the blocks around ``lines[position]``, innermost first, ending with the hunk section."""
    text = lines[position][1]
    level = _indent(text) if text.strip() else None
    headers = []
    for _, earlier in reversed(lines[:position]):
        if not earlier.strip():
            continue
        indent = _indent(earlier)
        if level is None or indent < level:
            if level is not None:
                headers.append(earlier.strip())
            level = indent
            if indent == 0:
                break
    if section and (level is None or level > 0):
        headers.append(section)
    return tuple(headers)


def _docstring_flags(texts):
    """For each line: is it part of a docstring?

    A docstring opens on a line starting with triple quotes right after a line ending in
    ``:`` (a def or class header) and runs to its closing quotes; a line that starts with
    triple quotes and closes them is a one-line docstring. A hunk that starts inside a
    docstring cannot be told from code, so its lines count as code.
    """
    flags, inside, previous = [], False, ""
    for text in texts:
        stripped = text.strip()
        quotes = sum(stripped.count(quote) for quote in DOCSTRING_QUOTES)
        starts = stripped.startswith(DOCSTRING_QUOTES)
        if inside:
            flags.append(True)
            inside = quotes % 2 == 0
        elif starts and quotes >= 2:
            flags.append(True)
        elif starts and previous.endswith(":"):
            flags.append(True)
            inside = True
        else:
            flags.append(False)
        if stripped:
            previous = stripped
    return flags


def is_import(line):
    """An import statement, or a line of a parenthesised import list."""
    stripped = line.text.strip()
    if stripped.startswith(IMPORT_STARTS):
        return True
    return bool(line.enclosing) and line.enclosing[0].startswith(IMPORT_STARTS) and line.enclosing[0].endswith("(")


def reached_by(line, markers):
    """The first (marker, header) whose pattern matches a block header around the line.

    The line itself counts when it opens a branch (``if has_flashinfer():``), not when it
    defines a name: a new def or class lands in the enclosing scope, which every platform sees.
    A header with a disjunction (``is_cuda() or is_rocm()``) may let any platform in, so it never counts.
    """
    own = line.text.strip()
    opens_branch = own.endswith(BLOCK_OPENERS) and not own.startswith(DEFINITIONS)
    for header in ((own,) if opens_branch else ()) + line.enclosing:
        if any(word in header for word in DISJUNCTIONS):
            continue
        for marker in markers:
            if marker.regex.search(header):
                return marker, header
    return None
