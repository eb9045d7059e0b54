"""Cheap substring tests that rule a regex out before it runs.

Most surface-file patterns need some literal text to match (``tl.load(``, ``fnuz``,
``assert``). ``required_literals`` reads a pattern's parse tree and returns strings of
which at least one must occur in any text the pattern matches, or None when it cannot
tell. ``FilteredPattern.search`` tries those substrings first (a C-speed ``in`` test)
and runs the regex only when one is present, which keeps triage of very large diffs
fast. When in doubt the filter answers "maybe", never "no": it may only skip work.
"""

import re

try:  # Python 3.11+ keeps the parser private; 3.10 has the public module.
    from re import _constants as _sre_constants
    from re import _parser as _sre_parse
except ImportError:  # pragma: no cover - Python 3.10
    import sre_constants as _sre_constants
    import sre_parse as _sre_parse

_LITERAL = _sre_constants.LITERAL
_SUBPATTERN = _sre_constants.SUBPATTERN
_BRANCH = _sre_constants.BRANCH
_REPEATS = (_sre_constants.MAX_REPEAT, _sre_constants.MIN_REPEAT)
MIN_LITERAL = 2


def required_literals(pattern, flags=0):
    """A set of strings one of which every match contains, or None (lower-cased for IGNORECASE)."""
    try:
        parsed = _sre_parse.parse(pattern, flags)
    except Exception:  # noqa: BLE001 - an unparsable pattern simply gets no filter
        return None
    options = _sequence(list(parsed))
    if not options or any(len(option) < MIN_LITERAL for option in options):
        return None
    if flags & re.IGNORECASE or parsed.state.flags & re.IGNORECASE:
        return {option.lower() for option in options}
    return options


def _sequence(items):
    """Best literal requirement of a sequence: the longest run, or a branch's option set."""
    best = None
    run = ""
    for op, arg in items:
        if op == _LITERAL:
            run += chr(arg)
            continue
        best = _better(best, {run} if run else None)
        run = ""
        if op == _SUBPATTERN:
            added_flags = arg[1] if len(arg) == 4 else 0
            if added_flags & re.IGNORECASE:
                continue  # a case-insensitive island inside a case-sensitive pattern
            best = _better(best, _sequence(list(arg[-1])))
        elif op == _BRANCH:
            best = _better(best, _branch(arg[1]))
        elif op in _REPEATS and arg[0] >= 1:
            best = _better(best, _sequence(list(arg[2])))
    return _better(best, {run} if run else None)


def _branch(alternatives):
    options = set()
    for alternative in alternatives:
        found = _sequence(list(alternative))
        if not found:
            return None
        options |= found
    return options


def _better(current, candidate):
    """Prefer the requirement whose weakest option is longest in UTF-8 bytes (the most selective test).

    Bytes, not characters: a two-character CJK word is far rarer in code than ``ai``.
    """
    if not candidate or any(not option for option in candidate):
        return current
    if current is None:
        return candidate
    return candidate if _weakest(candidate) > _weakest(current) else current


def _weakest(options):
    return min(len(option.encode("utf-8")) for option in options)


class FilteredPattern:
    """A compiled regex behind a required-substring test; same ``search``/``finditer`` results."""

    def __init__(self, pattern, flags=0):
        self.regex = re.compile(pattern, flags)
        self.pattern = pattern
        literals = required_literals(pattern, flags)
        self.literals = tuple(sorted(literals)) if literals else None
        self.fold_case = bool(flags & re.IGNORECASE) or bool(self.regex.flags & re.IGNORECASE)

    def could_match(self, text, lowered=None):
        """False only when no match is possible; ``lowered`` may pass ``text.lower()`` computed once."""
        if self.literals is None:
            return True
        if self.fold_case:
            text = lowered if lowered is not None else text.lower()
        return any(literal in text for literal in self.literals)

    def search(self, text, lowered=None):
        return self.regex.search(text) if self.could_match(text, lowered) else None

    def finditer(self, text):
        return self.regex.finditer(text) if self.could_match(text) else iter(())

    def match(self, text):
        return self.regex.match(text) if self.could_match(text) else None
