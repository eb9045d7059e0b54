"""Path patterns as the surface file writes them, compiled for triage: globs, files and directories.

Globs match as surface.glob_matches does (``fnmatch``, ``*`` crossing ``/``); a plain path also
matches what lies under it, so a directory entry covers its files.
"""

import fnmatch
import re
from dataclasses import dataclass

from ..core.surface import is_glob


@dataclass(frozen=True)
class PathPattern:
    """A glob (``*`` also crosses ``/``), or a file or directory matched exactly or as a prefix."""

    path: str
    regex: re.Pattern

    @classmethod
    def parse(cls, path):
        if is_glob(path):
            return cls(path, re.compile(fnmatch.translate(path)))
        return cls(path, re.compile(re.escape(path.rstrip("/")) + r"(?:/.*)?\Z", re.DOTALL))

    def matches(self, candidate):
        return self.regex.match(candidate) is not None


class PathTable:
    """Facts that each carry a ``pattern``, with one combined regex that rules a path out at once."""

    def __init__(self, facts):
        self.facts = list(facts)
        combined = "|".join(f"(?:{fact.pattern.regex.pattern})" for fact in self.facts)
        self._any = re.compile(combined) if self.facts else None

    def __iter__(self):
        return iter(self.facts)

    def __len__(self):
        return len(self.facts)

    def matching(self, path):
        """Facts whose pattern (and excludes, when the fact has them) match ``path``, in order."""
        if self._any is None or self._any.match(path) is None:
            return []
        return [fact for fact in self.facts if fact.matches(path)]
