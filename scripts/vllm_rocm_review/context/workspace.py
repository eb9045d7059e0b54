"""What every pack section reads: the parsed diff, the two commits, and the Python files at each."""

import fnmatch
from dataclasses import dataclass, field

from . import symbols as sym

SKIPPED_PREFIXES = ("tests/", "docs/", "benchmarks/", "examples/")


@dataclass
class Workspace:
    diffs: list
    reader: object
    base: str | None
    head: str | None
    searchable: bool  # a whole tree at head: git grep and ls-tree work
    settings: dict
    surface: dict
    head_texts: dict = field(default_factory=dict)
    base_texts: dict = field(default_factory=dict)
    head_trees: dict = field(default_factory=dict)
    head_defs: dict = field(default_factory=dict)
    base_defs: dict = field(default_factory=dict)

    def load_python(self):
        """Read and parse every changed Python file at both sides, in two git calls."""
        python = [diff for diff in self.diffs if diff.path.endswith(".py")]
        if self.head:
            wanted = [diff.path for diff in python if diff.status != "removed"]
            self.head_texts = {path: text for path, text in self.reader.read_many(self.head, wanted).items() if text}
        if self.base:
            wanted = [diff.old_path or diff.path for diff in python if diff.status != "added"]
            self.base_texts = {path: text for path, text in self.reader.read_many(self.base, wanted).items() if text}
        for path, text in self.head_texts.items():
            tree = sym.parse_python(text)
            if tree is not None:
                self.head_trees[path] = tree
                self.head_defs[path] = sym.definitions(tree)
        for path, text in self.base_texts.items():
            tree = sym.parse_python(text)
            if tree is not None:
                self.base_defs[path] = sym.definitions(tree)

    def head_paths(self):
        return self.reader.paths(self.head) if self.searchable else []

    def added_lines(self):
        """{(path, line)} of every added line, in head numbering."""
        return {(diff.path, number) for diff in self.diffs for number, _ in diff.added}


def is_product_code(path):
    """A vLLM source file, not a test, doc, benchmark or example."""
    return path.endswith(".py") and not path.startswith(SKIPPED_PREFIXES)


def matches_any(path, globs):
    return any(fnmatch.fnmatchcase(path, pattern) for pattern in globs)


def flag(code, path, line, message):
    return {"code": code, "path": path, "line": line, "message": message}
