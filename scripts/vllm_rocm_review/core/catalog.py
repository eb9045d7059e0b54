"""Read the rule catalog (references/vllm-rocm-review-rules.md) as anchored sections.

A section starts at a line ``<a id="ANCHOR"></a>`` directly followed by a markdown
heading, and runs until the next anchor whose heading level is the same or higher, or
to the end of the file. Triage cuts rule bodies out by anchor so a quick review reads
only the part of the catalog the PR needs; tests use the same parser to check the
catalog against the YAML.
"""

import re
from dataclasses import dataclass
from pathlib import Path

from .file_errors import read_failure
from .skill_paths import RULES_CATALOG

ANCHOR_LINE = re.compile(r'^<a id="([^"]+)"></a>\s*$')
HEADING_LINE = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
SEPARATOR_CELL = re.compile(r":?-{3,}:?")
RULE_ANCHOR_PREFIX = "rule-"
# The catalog's one record of the vLLM commit its facts were checked at, in its opening paragraph.
VERIFIED_AT = re.compile(r"checked against vLLM main at ([0-9a-f]{7,40}) \((\d{4}-\d{2}-\d{2})\)")


class CatalogError(ValueError):
    """The catalog is missing, unreadable or has no usable anchors."""


@dataclass(frozen=True)
class Section:
    anchor: str
    level: int
    title: str
    start: int  # index of the anchor line
    end: int  # index one past the last line

    @property
    def line_count(self):
        return self.end - self.start


class Catalog:
    """The catalog's lines and its anchored sections, in file order."""

    def __init__(self, text, path=None):
        self.path = path
        self.lines = text.splitlines()
        self.sections = _find_sections(self.lines)
        self._by_anchor = {}
        for section in self.sections:
            self._by_anchor.setdefault(section.anchor, section)

    @property
    def line_count(self):
        return len(self.lines)

    def anchors(self):
        return [section.anchor for section in self.sections]

    def section(self, anchor):
        """The section with this anchor, or None."""
        return self._by_anchor.get(anchor)

    def cut(self, anchor):
        """The text of one section (anchor line included), or None when the anchor is absent."""
        lines = self.section_lines(anchor)
        return None if lines is None else "\n".join(lines).rstrip("\n") + "\n"

    def covered_lines(self, anchors):
        """How many distinct catalog lines these sections span together (nesting counted once)."""
        covered = set()
        for anchor in anchors:
            section = self._by_anchor.get(anchor)
            if section is not None:
                covered.update(range(section.start, section.end))
        return len(covered)

    def section_lines(self, anchor):
        """The lines of one section (anchor line included), or None when the anchor is absent."""
        section = self._by_anchor.get(anchor)
        return None if section is None else self.lines[section.start:section.end]

    def verified_at(self):
        """``(commit, YYYY-MM-DD)`` of the vLLM main the catalog's facts were checked at, or None."""
        match = VERIFIED_AT.search("\n".join(self.lines[:self.sections[0].start] if self.sections else self.lines))
        return (match.group(1), match.group(2)) if match else None

    def lines_naming(self, text, anchors):
        """``(anchor, 1-based line, line text)`` for each line of these sections that contains ``text``."""
        found = []
        for anchor in anchors:
            section = self._by_anchor.get(anchor)
            if section is not None:
                found += [(anchor, index + 1, self.lines[index]) for index in range(section.start, section.end)
                          if text in self.lines[index]]
        return found

    def rule_ids(self):
        """Rule IDs with a body, upper-cased from their ``rule-<id>`` anchors, in file order."""
        return [anchor[len(RULE_ANCHOR_PREFIX):].upper() for anchor in self.anchors()
                if anchor.startswith(RULE_ANCHOR_PREFIX)]


def rule_anchor(rule_id):
    """The catalog anchor of a rule ID: ``D1b`` -> ``rule-d1b``."""
    return RULE_ANCHOR_PREFIX + rule_id.lower()


def table_rows(lines):
    """Rows of the first markdown table in ``lines`` as lists of stripped cells: header first, separator dropped."""
    rows = []
    for line in lines:
        stripped = line.strip()
        if not stripped.startswith("|"):
            if rows:
                break
            continue
        cells = [cell.strip() for cell in stripped.strip("|").split("|")]
        if not all(SEPARATOR_CELL.fullmatch(cell) for cell in cells):
            rows.append(cells)
    return rows


def parse_catalog(text, path=None):
    return Catalog(text, path)


def load_catalog(path=RULES_CATALOG):
    """Parse the catalog file; raise CatalogError when it is missing, unreadable, empty or has no anchors."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise CatalogError(f"{path}: {read_failure(exc)}") from None
    if not text.strip():
        raise CatalogError(f"{path}: empty")
    catalog = Catalog(text, path)
    if not catalog.sections:
        raise CatalogError(f'{path}: no <a id="..."></a> anchors followed by a heading')
    return catalog


def _find_sections(lines):
    starts = []
    for index in range(len(lines) - 1):
        anchor = ANCHOR_LINE.match(lines[index])
        heading = HEADING_LINE.match(lines[index + 1]) if anchor else None
        if heading:
            starts.append((index, anchor.group(1), len(heading.group(1)), heading.group(2)))
    sections = []
    for position, (start, anchor, level, title) in enumerate(starts):
        end = len(lines)
        for later_start, _, later_level, _ in starts[position + 1:]:
            if later_level <= level:
                end = later_start
                break
        sections.append(Section(anchor, level, title, start, end))
    return sections
