"""Check a review report against the seed's Step 8 contract (see report_format.py).

The report is parsed once into a ParsedReport; each check is a pure function of that
structure returning Findings. check_report() runs them all. Checks and codes:

  HEADER-TITLE, HEADER-FIELD, HEADER-MISMATCH   title line and blockquote fields (vs the PR)
  SECTION-MISSING, SECTION-ORDER, SECTION-HEADING, SECTION-EXTRA   the five numbered sections
  FINDINGS-EMPTY, NO-FINDINGS-UNSTATED          section 3 only when there are findings
  SUMMARY-TABLE-MISSING, SUMMARY-TABLE-ROW, SUMMARY-TABLE-COUNT   意见类型 × 数量 vs findings
  FINDING-FORMAT, FINDING-TYPE, FINDING-TAG, FINDING-BULLETS, FINDING-ACTION, FINDING-ORDER
  RED-NO-TRIGGER                                every 🔴 names a shape/dtype/arch/config/env/model
  VERDICT-MISSING, VERDICT-MISMATCH             verdict follows from the severities present
  RULE-ID-LEAK, PLACEHOLDER, LENGTH, LANGUAGE   errors
  FINDING-COUNT, UNKNOWN-PATH, BARE-UPSTREAM-PATH, UNKNOWN-UPSTREAM-PATH, UPSTREAM-LINE
                                                warnings (do not fail the check)
  UPSTREAM-UNCHECKED                            notes: said, never counted against the report
  (the UNKNOWN-UPSTREAM-PATH, UPSTREAM-LINE and UPSTREAM-UNCHECKED checks live in upstream_citations.py)

HTML comments (``<!-- … -->``) do not render, so they are not report content: only PLACEHOLDER
sees them. A section that still holds a ``TODO(agent)`` placeholder is unfinished: its PLACEHOLDER
errors say what to do, so the checks that would judge its absent content (FINDINGS-EMPTY,
NO-FINDINGS-UNSTATED, VERDICT-MISSING, the summary-table counts) stay silent, and placeholder
lines count neither as prose nor as a verdict.
"""

import re
from dataclasses import dataclass, field
from functools import lru_cache

from ..core.catalog import CatalogError
from ..core.catalog import load_catalog
from . import report_format as fmt
from .check_finding import LEVEL_ERROR
from .check_finding import LEVEL_WARNING
from .check_finding import LEVELS
from .check_finding import Finding
from .upstream_citations import check_external_citations
from .upstream_citations import upstream_owners
from .upstream_citations import without_citations

# The one command that saves vLLM main's path list for UNKNOWN-PATH.
SAVE_VLLM_TREE = "python3 scripts/update_skill.py --check-vllm-tree"

# Prose counts as Chinese when CJK characters make up at least this share of CJK characters
# plus Latin words (one Chinese character is roughly one morpheme, one English word one word).
# Measured: fluent Chinese review prose ~0.9, jargon-heavy Chinese with English nouns in every
# clause ~0.55, English prose 0.0 (contract labels are not counted). English reports (--lang en)
# must stay at or under the second threshold.
MIN_CJK_SHARE_ZH = 0.3
MAX_CJK_SHARE_EN = 0.2
MIN_PROSE_UNITS = 30

FENCE = re.compile(r"^\s*(```|~~~)")
H2 = re.compile(r"^##\s+(.*?)\s*#*\s*$")
NUMBERED_TITLE = re.compile(r"^(\d+)\.\s*(.*)$")
TITLE_LINE = re.compile(r"^# PR #(\d+): (.+)$")
HEADER_PAIR = re.compile(r"\*\*([^*]+?)\*\*\s*[:：]\s*(.*?)\s*(?=\|\s*\*\*|$)")
FIELD_FORMATS = {
    "Author": r"@[A-Za-z0-9](?:[A-Za-z0-9-]*)(?:\[bot\])?",
    "State": "|".join(fmt.STATES),
    "Date": r"\d{4}-\d{2}-\d{2}",
    "Branch": r"`[^`]+` → `[^`]+`",
    "Labels": r"\S.*",
    "Changes": r"\+\d+ -\d+ lines across \d+ files",
    fmt.RELEVANCE_FIELD: "|".join(fmt.RELEVANCE_LABELS.values()),
}
SEVERITY_ALTERNATION = "🔴|⚠️|📝"
FINDING_START = re.compile(rf"^\s*(?:#{{1,6}}\s+|[-*+]\s+)?(?:\*\*)?\s*({SEVERITY_ALTERNATION})")
# The heading's shape; which 类型 and which tag are checked separately (FINDING-TYPE / -TAG).
FINDING_CANONICAL = re.compile(rf"^\*\*({SEVERITY_ALTERNATION})【[^】]*】.+?\*\*(?:\s+`?\[[^\]]+\]`?)?\s*$")
TYPE_BRACKETS = re.compile(r"【([^】]*)】")
BULLET = re.compile(r"^\s*[-*+]\s+\*\*\s*(" + "|".join(fmt.BULLET_LABELS) + r")\s*[:：]?\s*\*\*\s*[:：]?\s*(.*)$")
TABLE_SEPARATOR = re.compile(r"^\|?\s*:?-{2,}:?\s*(\|\s*:?-{2,}:?\s*)*\|?\s*$")
INLINE_CODE = re.compile(r"`[^`]*`")
URL = re.compile(r"https?://\S+")
LINK_TARGET = re.compile(r"\]\([^)]*\)")
PATH_TOKEN = re.compile(r"(?<![A-Za-z0-9_/.:-])((?:[A-Za-z0-9_.-]+/)+[A-Za-z0-9_.-]+)(?![A-Za-z0-9_./*{}-])")
FILE_SUFFIX = re.compile(r"\.[A-Za-z][A-Za-z0-9_]*$")
EXTENSIONLESS_FILES = ("Dockerfile", "CODEOWNERS", "Makefile", "CMakeLists.txt", "LICENSE")
# Where a catalog ID is a reference to the catalog: an ID-shaped token (a letter or two and a
# number, or HK) counts only in a rule-like position (see rule_ids_in).
ID_TOKEN = r"(?<![A-Za-z0-9_.])(?<![A-Za-z]-)(?:[A-Z]{1,2}[0-9]{1,2}[a-z]?|HK)(?![A-Za-z0-9_]|\.\d)"
# After a word that names a rule, any ID shape counts, even one the catalog lacks ("rule A3").
RULE_ID_SHAPE = re.compile(r"[A-Z][1-9][0-9]?[a-z]?|HK[0-9]?")
# IDs written as one list or range: "B1、D1b", "P1–P4", "A1/A2 和 B6". "→" joins topology, not rules.
ID_GROUP = re.compile(rf"{ID_TOKEN}(?:\s*(?:[、,，/–—~-]|和|与|及|and|or)\s*{ID_TOKEN})*")
RULE_NAMED_BEFORE = re.compile(r"(?:规则|条目|检查项|违反了?|\brules?|\bviolat\w*)\s*[:：#]?\s*$", re.IGNORECASE)
# After a word that only points somewhere ("参见 P2", "按 V2"), only the catalog's own IDs count:
# "参见 R1 的配置" points at a model.
RULE_POINTER_BEFORE = re.compile(r"(?:参见|参照|见|按照?|依据|根据|\bsee|\bper)\s*[:：#]?\s*$", re.IGNORECASE)
RULE_WORD_AFTER = re.compile(r"^\s*(?:这?条?规则|号规则|\brules?\b)", re.IGNORECASE)
# "P1 优先级", "P0/P1 问题": a priority scale, never a rule (P0 and P6+ are not catalog IDs).
PRIORITY_AFTER = re.compile(r"^\s*(?:优先级|级|priority)", re.IGNORECASE)
PRIORITY_BEFORE = re.compile(r"(?:优先级|priority)\s*[:：(（]?\s*$", re.IGNORECASE)
# "HK：缺少测试", "- D8: …": an ID used as a label at the start of a line or bullet.
LABEL_BEFORE = re.compile(r"^\s*(?:[-*+]\s+)?(?:\*\*)?\s*$")
LABEL_AFTER = re.compile(r"^(?:\*\*)?\s*[:：]")
# "P4→D8", "P2->D4": prefill/decode topology, written with an arrow.
TOPOLOGY_ARROW = re.compile(r"^\s*(?:→|->|↔|⇒)|(?:→|->|↔|⇒)\s*$")
OPENING_BRACKETS = "(（[【"
CLOSING_BRACKETS = ")）]】"
# "vLLM V1", "DeepSeek V3", "V1 引擎" are versions, not rules.
VERSION_BEFORE = re.compile(r"[A-Za-z][A-Za-z0-9.]*[ -]?$")
VERSION_AFTER = re.compile(r"^\s*(?:engine|引擎|架构|调度|版本)", re.IGNORECASE)
HTML_COMMENT = re.compile(r"<!--.*?-->")
CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff]")
LATIN_WORD = re.compile(r"[A-Za-z][A-Za-z0-9_'-]*")
# Fixed contract tokens carry no signal about the prose language.
CONTRACT_TOKENS = re.compile(
    "|".join(re.escape(token) for token in (
        *(f"**{label}**" for label in fmt.BULLET_LABELS), *fmt.VERIFICATION_TAGS,
        *(f"【{kind}】" for kind in fmt.FINDING_TYPES), *fmt.SEVERITY_NAMES.values(), *fmt.VERDICTS,
    ))
)


@dataclass
class Section:
    number: int | None
    heading: str
    line: int
    body: list = field(default_factory=list)  # (line number, text) pairs outside code fences and comments
    unfilled: bool = False  # a TODO(agent) placeholder is still in it

    def content(self):
        """Body lines that are not placeholders: what the author actually wrote."""
        return [(number, line) for number, line in self.body if not is_placeholder(line)]


@dataclass
class ReviewFinding:
    line: int
    heading: str
    severity: str
    canonical: bool
    types: list
    tags: list
    bullets: dict  # label -> (line, text including continuation lines)
    body: list  # (line number, text) of the heading and everything under it


@dataclass
class SummaryRow:
    line: int
    key: str
    cells: list


@dataclass
class SummaryTable:
    line: int
    header: list
    rows: list


@dataclass
class ParsedReport:
    lines: list
    header: list  # (line number, text) before the first H2
    sections: list
    findings: list
    summary_table: SummaryTable | None

    def section(self, number):
        return next((section for section in self.sections if section.number == number), None)


def parse_report(text):
    """Split the report into header, sections, findings and the summary table (one pass)."""
    lines = text.splitlines()
    header, sections = [], []
    for number, line in visible_lines(lines):
        heading = H2.match(line)
        if heading:
            title = heading.group(1)
            numbered = NUMBERED_TITLE.match(title)
            sections.append(Section(int(numbered.group(1)) if numbered else None, f"## {title}", number))
        elif sections:
            sections[-1].body.append((number, line))
        else:
            header.append((number, line))
    starts = [section.line for section in sections] + [len(lines) + 1]
    for section, end in zip(sections, starts[1:]):
        section.unfilled = any(is_placeholder(line) for line in lines[section.line:end - 1])
    findings_section = next((s for s in sections if s.number == fmt.FINDINGS_SECTION), None)
    findings, table = parse_findings_section(findings_section.body if findings_section else [])
    return ParsedReport(lines, header, sections, findings, table)


def visible_lines(lines):
    """(line number, text) of what renders: no code fences, no HTML comments, blank lines kept.

    A line that held only a comment is dropped rather than kept blank, so a comment between two
    lines of a bullet does not end the bullet.
    """
    in_fence = in_comment = False
    for number, line in enumerate(lines, 1):
        if not in_comment and FENCE.match(line):
            in_fence = not in_fence
            continue
        if in_fence:
            continue
        text = line
        if in_comment:
            if "-->" not in text:
                continue
            text = text.split("-->", 1)[1]
            in_comment = False
        text = HTML_COMMENT.sub("", text)
        if "<!--" in text:
            text = text.split("<!--", 1)[0]
            in_comment = True
        if text.strip() or not line.strip():
            yield number, normalize_emoji(text)


def is_placeholder(line):
    return fmt.PLACEHOLDER in line


def normalize_emoji(line):
    """Treat a bare ⚠ (no variation selector) as ⚠️."""
    return re.sub("⚠(?!\ufe0f)", "⚠️", line)


def parse_findings_section(body):
    findings = []
    table_lines = []
    for number, line in body:
        start = FINDING_START.match(line)
        if start and ("【" in line or any(tag in line for tag in fmt.VERIFICATION_TAGS)):
            canonical = FINDING_CANONICAL.match(line.strip())
            findings.append(ReviewFinding(
                line=number, heading=line.strip(), severity=start.group(1), canonical=bool(canonical),
                types=TYPE_BRACKETS.findall(line),
                tags=[tag for tag in fmt.VERIFICATION_TAGS if tag in line],
                bullets={}, body=[(number, line)],
            ))
        elif findings:
            findings[-1].body.append((number, line))
        elif line.lstrip().startswith("|"):
            table_lines.append((number, line))
    for finding in findings:
        finding.bullets = parse_bullets(finding.body[1:])
    return findings, parse_table(table_lines)


def parse_bullets(body):
    bullets = {}
    current = None
    for number, line in body:
        match = BULLET.match(line)
        if match:
            current = match.group(1)
            bullets.setdefault(current, (number, match.group(2).strip()))
        elif current and line.strip() and not line.lstrip().startswith("|"):
            start, text = bullets[current]
            bullets[current] = (start, f"{text} {line.strip()}".strip())
        elif not line.strip():
            current = None
    return bullets


def parse_table(table_lines):
    """The first table: header cells and data rows (the separator row dropped)."""
    if not table_lines:
        return None
    first = table_lines[0][0]
    contiguous = [table_lines[0]]
    for number, line in table_lines[1:]:
        if number != contiguous[-1][0] + 1:
            break
        contiguous.append((number, line))
    header = split_cells(contiguous[0][1])
    rows = [SummaryRow(number, cells[0] if cells else "", cells)
            for number, line in contiguous[1:] if not TABLE_SEPARATOR.match(line.strip())
            for cells in [split_cells(line)]]
    return SummaryTable(first, header, rows)


def split_cells(line):
    return [cell.strip() for cell in line.strip().strip("|").split("|")]


# --- checks ------------------------------------------------------------------

def check_report(text, pr_document=None, lang="zh", vllm_tree=None, upstream_dir=None, upstream_trees=None):
    """All violations of the report contract, sorted by line (errors, then warnings, then notes on a line).

    ``vllm_tree`` is a path_trees.VllmTree; ``upstream_dir`` holds other repositories' saved files;
    ``upstream_trees`` (an upstream_citations.CitationTrees) their cached trees at the cited refs.
    """
    parsed = parse_report(text)
    found = [
        *check_placeholders(parsed),
        *check_header(parsed, fmt.expected_header(pr_document) if pr_document else None),
        *check_sections(parsed),
        *check_summary_table(parsed),
        *check_findings(parsed, lang),
        *check_verdict(parsed),
        *check_rule_id_leaks(parsed),
        *check_length(parsed),
        *check_language(parsed, lang),
    ]
    if pr_document is not None or vllm_tree is not None:
        found.extend(check_paths(parsed, known_paths(pr_document, vllm_tree.paths if vllm_tree else None),
                                 pr_given=pr_document is not None, tree=vllm_tree))
    found.extend(check_external_citations(parsed.findings, upstream_dir, upstream_trees))
    return sorted(found, key=lambda item: (item.line, LEVELS.index(item.level), item.code))


def check_placeholders(parsed):
    return [
        Finding(LEVEL_ERROR, number, "PLACEHOLDER", f"scaffold placeholder {fmt.PLACEHOLDER} left in the report",
                "replace it with the finished text or delete the line")
        for number, line in enumerate(parsed.lines, 1) if fmt.PLACEHOLDER in line
    ]


def check_header(parsed, expected=None):
    found = []
    nonblank = [(number, line) for number, line in parsed.header if line.strip()]
    title_number, title = nonblank[0] if nonblank else (1, "")
    title_match = TITLE_LINE.match(title.strip())
    if not title_match:
        found.append(Finding(LEVEL_ERROR, title_number, "HEADER-TITLE", "the report does not start with '# PR #<N>: <Title>'",
                             "make the first line '# PR #<number>: <PR title>'"))
    elif expected and title.strip() != expected["Title"]:
        found.append(Finding(LEVEL_ERROR, title_number, "HEADER-MISMATCH", f"title line differs from the PR: {title.strip()!r}",
                             f"write {expected['Title']!r}"))
    fields = {}
    for number, line in nonblank[1:]:
        if line.lstrip().startswith(">"):
            for name, value in HEADER_PAIR.findall(line.lstrip()[1:]):
                fields.setdefault(name.strip(), (number, value.strip()))
    last_line = nonblank[-1][0] if nonblank else 1
    for name in fmt.HEADER_FIELDS:
        if name not in fields:
            found.append(Finding(LEVEL_ERROR, last_line, "HEADER-FIELD", f"header field **{name}** is missing",
                                 f"add it to the header line that reads {header_line_example(name, expected)}"))
            continue
        number, value = fields[name]
        if not re.fullmatch(FIELD_FORMATS[name], value):
            found.append(Finding(LEVEL_ERROR, number, "HEADER-FIELD", f"**{name}** value {value!r} is malformed",
                                 f"write it as {field_example(name)}"))
        elif expected and name in expected and value != expected[name]:
            found.append(Finding(LEVEL_ERROR, number, "HEADER-MISMATCH",
                                 f"**{name}** is {value!r} but the PR says {expected[name]!r}",
                                 f"write **{name}**: {expected[name]}"))
    return found


def header_line_example(name, expected=None):
    """The whole blockquote line that holds field ``name``, with the PR's values when known."""
    fields = next(line for line in fmt.HEADER_LAYOUT if name in line)
    values = {field: (expected or {}).get(field) or field_example(field) for field in fields}
    return "'> " + fmt.FIELD_SEPARATOR.join(f"**{field}**: {values[field]}" for field in fields) + "'"


def field_example(name):
    examples = {
        "Author": "@login", "State": " / ".join(fmt.STATES), "Date": "YYYY-MM-DD (created_at, UTC)",
        "Branch": "`head` → `base`", "Labels": f"label1, label2 (or {fmt.NO_LABELS} for none)",
        "Changes": "+X -Y lines across N files", fmt.RELEVANCE_FIELD: " / ".join(fmt.RELEVANCE_LABELS.values()),
    }
    return examples[name]


def check_sections(parsed):
    found = []
    seen = {}
    for section in parsed.sections:
        known = section.number in range(1, len(fmt.SECTION_HEADINGS) + 1)
        if not known:
            found.append(Finding(LEVEL_ERROR, section.line, "SECTION-EXTRA", f"unexpected section {section.heading!r}",
                                 "fold its content into one of the five numbered sections and remove the heading"))
            continue
        expected = fmt.SECTION_HEADINGS[section.number - 1]
        if section.number in seen:
            found.append(Finding(LEVEL_ERROR, section.line, "SECTION-EXTRA",
                                 f"section {section.number} appears twice (first at line {seen[section.number]})",
                                 "merge the two into one section"))
            continue
        seen[section.number] = section.line
        if section.heading != expected:
            found.append(Finding(LEVEL_ERROR, section.line, "SECTION-HEADING", f"heading {section.heading!r} is not the contract's",
                                 f"write exactly {expected!r}"))
    numbers_in_order = [s.number for s in parsed.sections if s.number in seen and seen[s.number] == s.line]
    for previous, section in zip(numbers_in_order, numbers_in_order[1:]):
        if section < previous:
            found.append(Finding(LEVEL_ERROR, seen[section], "SECTION-ORDER",
                                 f"section {section} comes after section {previous}", "put sections 1 to 5 in order"))
            break
    end_line = len(parsed.lines) or 1
    for number, heading in enumerate(fmt.SECTION_HEADINGS, 1):
        if number in seen or number == fmt.FINDINGS_SECTION:
            continue
        later = [line for n, line in seen.items() if n > number]
        found.append(Finding(LEVEL_ERROR, min(later) if later else end_line, "SECTION-MISSING",
                             f"section {number} is missing", f"add {heading!r} here"))
    findings_section = parsed.section(fmt.FINDINGS_SECTION)
    if findings_section and not parsed.findings and not findings_section.unfilled:
        found.append(Finding(LEVEL_ERROR, findings_section.line, "FINDINGS-EMPTY", "section 3 has no findings",
                             "when there are no findings, omit section 3 entirely and say so in 结论"))
    verdict_section = parsed.section(fmt.VERDICT_SECTION)
    if not findings_section and verdict_section and not verdict_section.unfilled:
        text = "\n".join(line for _, line in verdict_section.content())
        if not any(re.search(pattern, text, re.IGNORECASE) for pattern in fmt.NO_FINDINGS_PATTERNS):
            found.append(Finding(LEVEL_ERROR, verdict_section.line, "NO-FINDINGS-UNSTATED",
                                 "section 3 is omitted but 结论 does not say there are no findings",
                                 f"add a sentence such as '{fmt.NO_FINDINGS_SENTENCE}'"))
    return found


def check_summary_table(parsed):
    if not parsed.findings:
        return []
    table = parsed.summary_table
    first_finding = parsed.findings[0].line
    if table is not None and any(is_placeholder(" ".join(row.cells)) for row in table.rows):
        return []  # its PLACEHOLDER errors come first; counts are judged once they are filled
    if table is None:
        return [Finding(LEVEL_ERROR, first_finding, "SUMMARY-TABLE-MISSING", "no 意见类型 × 数量 table before the first finding",
                        "put the summary table (| 意见类型 | 数量 | with one row per severity) before the findings")]
    severity_columns = {index: sev for index, cell in enumerate(table.header) for sev in fmt.SEVERITIES if sev in cell}
    if len(severity_columns) >= 2:
        return check_matrix_table(table, severity_columns, parsed.findings)
    count_index = next((index for index, cell in enumerate(table.header) if cell in fmt.COUNT_COLUMN_NAMES), None)
    if count_index is None:
        return [Finding(LEVEL_ERROR, table.line, "SUMMARY-TABLE-MISSING", "the summary table has no 数量 column",
                        "use the header '| 意见类型 | 数量 |'")]
    found = []
    claims = {"severity": {}, "type": {}}
    for row in table.rows:
        kind, key = classify_row_key(row.key)
        count = parse_count(row.cells, count_index)
        if kind is None or count is None:
            found.append(Finding(LEVEL_ERROR, row.line, "SUMMARY-TABLE-ROW",
                                 f"row {row.key!r} is not a severity, a 类型 or a total with a number",
                                 "label rows '🔴 必须修复' / '⚠️ 建议修复' / '📝 建议/备注' (or a 类型) and give an integer count"))
        elif kind == "total":
            if count != len(parsed.findings):
                found.append(count_mismatch(row.line, row.key, count, len(parsed.findings)))
        else:
            claims[kind][key] = (row.line, count)
    actual = {
        "severity": count_by(finding.severity for finding in parsed.findings),
        "type": count_by(finding.types[0] for finding in parsed.findings if finding.types),
    }
    for kind in ("severity", "type"):
        if not claims[kind]:
            continue
        for key in sorted(set(claims[kind]) | set(actual[kind])):
            line, claimed = claims[kind].get(key, (table.line, 0))
            if claimed != actual[kind].get(key, 0):
                found.append(count_mismatch(line, key, claimed, actual[kind].get(key, 0)))
    if not claims["severity"] and not claims["type"] and not found:
        found.append(Finding(LEVEL_ERROR, table.line, "SUMMARY-TABLE-ROW", "the summary table has no severity or 类型 rows",
                             "add one row per severity: 🔴 必须修复 / ⚠️ 建议修复 / 📝 建议/备注"))
    return found


def check_matrix_table(table, severity_columns, findings):
    """A 类型 × severity table: each cell counts findings of that 类型 and severity."""
    found = []
    actual = count_by((finding.types[0] if finding.types else "", finding.severity) for finding in findings)
    claimed_types = set()
    for row in table.rows:
        kind, key = classify_row_key(row.key)
        if kind == "total":
            continue
        if kind != "type":
            found.append(Finding(LEVEL_ERROR, row.line, "SUMMARY-TABLE-ROW", f"row {row.key!r} is not a 类型",
                                 f"label each row with one of: {'、'.join(fmt.FINDING_TYPES)}"))
            continue
        claimed_types.add(key)
        for index, severity in severity_columns.items():
            count = parse_count(row.cells, index)
            if count != actual.get((key, severity), 0):
                found.append(count_mismatch(row.line, f"{key} × {severity}", count, actual.get((key, severity), 0)))
    for kind, severity in sorted(actual):
        if kind not in claimed_types:
            found.append(count_mismatch(table.line, f"{kind} × {severity}", 0, actual[(kind, severity)]))
    return found


def classify_row_key(key):
    for severity in fmt.SEVERITIES:
        if severity in normalize_emoji(key):
            return "severity", severity
    bare = key.strip("*【】 ")
    if bare in fmt.FINDING_TYPES:
        return "type", bare
    if bare in fmt.TOTAL_ROW_NAMES:
        return "total", bare
    return None, None


def parse_count(cells, index):
    if index >= len(cells):
        return None
    cell = cells[index].strip("* ")
    return int(cell) if cell.isdigit() else None


def count_by(keys):
    counts = {}
    for key in keys:
        counts[key] = counts.get(key, 0) + 1
    return counts


def count_mismatch(line, key, claimed, actual):
    return Finding(LEVEL_ERROR, line, "SUMMARY-TABLE-COUNT", f"the table says {key}: {claimed}, but section 3 has {actual}",
                   f"set the count to {actual} (or add/remove findings so they agree)")


def check_findings(parsed, lang):
    found = []
    found.extend(check_finding_order(parsed.findings))
    for finding in parsed.findings:
        if not finding.canonical:
            found.append(Finding(LEVEL_ERROR, finding.line, "FINDING-FORMAT", "finding heading is not in the contract's form",
                                 "write it on one line as "
                                 + fmt.FINDING_TEMPLATE.format(severity="🔴", type="类型", title="标题", tag="[已验证]")))
        if len(finding.types) != 1 or finding.types[0] not in fmt.FINDING_TYPES:
            shown = "、".join(finding.types) or "none"
            found.append(Finding(LEVEL_ERROR, finding.line, "FINDING-TYPE", f"类型 {shown} is not one allowed 类型",
                                 f"use exactly one of 【{'】【'.join(fmt.FINDING_TYPES)}】"))
        if len(finding.tags) != 1:
            found.append(Finding(LEVEL_ERROR, finding.line, "FINDING-TAG",
                                 "the finding needs exactly one verification tag",
                                 "end the heading with `[已验证]` (you checked the code) or `[推测]` (you infer it)"))
        missing = [label for label in fmt.BULLET_LABELS if not finding.bullets.get(label, (0, ""))[1]]
        if missing:
            found.append(Finding(LEVEL_ERROR, finding.line, "FINDING-BULLETS",
                                 f"the finding lacks the {' / '.join(missing)} bullet(s)",
                                 "give it three bullets: "
                                 + " ".join(fmt.BULLET_TEMPLATE.format(label=label, text="…") for label in fmt.BULLET_LABELS)))
        elif [label for label, _ in sorted(finding.bullets.items(), key=lambda item: item[1][0])] != list(fmt.BULLET_LABELS):
            found.append(Finding(LEVEL_ERROR, finding.line, "FINDING-BULLETS", "bullets are not in the order 问题, 影响, 行动",
                                 "reorder them: 问题, then 影响, then 行动"))
        action = finding.bullets.get("行动")
        if action and action[1] and not fmt.is_concrete_request(action[1]):
            found.append(Finding(LEVEL_ERROR, action[0], "FINDING-ACTION", "行动 asks nothing concrete of the author",
                                 f"make it a request with an object: {fmt.ACTION_EXAMPLES}"))
        if finding.severity == "🔴" and not names_trigger(finding):
            found.append(Finding(LEVEL_ERROR, finding.line, "RED-NO-TRIGGER",
                                 "this 🔴 finding names no concrete triggering input",
                                 "name the shape, dtype, arch, config, sequence length or batch size, env setting "
                                 "or model that triggers it, or downgrade it to ⚠️"))
    count = len(parsed.findings)
    low, high = fmt.RECOMMENDED_FINDINGS
    section = parsed.section(fmt.FINDINGS_SECTION)
    if count and not low <= count <= high:
        found.append(Finding(LEVEL_WARNING, section.line, "FINDING-COUNT", f"{count} findings; the target is {low} to {high}",
                             "merge minor findings or drop the weakest" if count > high else
                             "check for blind spots, but do not invent findings"))
    return found


def check_finding_order(findings):
    """One error, at the first finding that sits below a less severe one, giving the whole order."""
    worst_so_far = 0
    for finding in findings:
        rank = fmt.SEVERITIES.index(finding.severity)
        if rank < worst_so_far:
            counts = count_by(item.severity for item in findings)
            order = ", ".join(f"{severity} ×{counts[severity]}" for severity in fmt.SEVERITIES if severity in counts)
            return [Finding(LEVEL_ERROR, finding.line, "FINDING-ORDER",
                            f"this {finding.severity} finding comes after a {fmt.SEVERITIES[worst_so_far]} one; "
                            "findings run 🔴 → ⚠️ → 📝",
                            f"reorder the findings as {order}")]
        worst_so_far = max(worst_so_far, rank)
    return []


def names_trigger(finding):
    return text_names_trigger(" ".join(line for _, line in finding.body))


def text_names_trigger(text):
    """Whether prose names a concrete triggering input; paths and URLs do not count."""
    text = PATH_TOKEN.sub(" ", URL.sub(" ", text))
    return any(regex.search(text) for regex in fmt.TRIGGER_REGEXES.values())


def check_verdict(parsed):
    section = parsed.section(fmt.VERDICT_SECTION)
    if section is None:
        return []
    verdict = None
    for number, line in section.content():
        positions = [(line.find(v), v) for v in fmt.VERDICTS if v in line]
        if positions:
            verdict = (number, min(positions)[1])
            break
    if verdict is None:
        if section.unfilled:
            return []  # its PLACEHOLDER error says to write the verdict
        return [Finding(LEVEL_ERROR, section.line, "VERDICT-MISSING", "结论 gives no verdict",
                        f"start 结论 with one of {' / '.join(fmt.VERDICTS)} and a 1–2 sentence rationale")]
    line, given = verdict
    severities = [finding.severity for finding in parsed.findings]
    expected = fmt.verdict_for(severities)
    if given == expected:
        return []
    reasons = {
        "🔴 BLOCK": "there is a 🔴 finding, which means 必须修复",
        "⚠️ NEEDS WORK": "there is a ⚠️ finding and no 🔴 one",
        "✅ LGTM": "there is no 🔴 or ⚠️ finding",
    }
    if given == "🔴 BLOCK":
        fix = f"write {expected}, or add the 🔴 finding (with its triggering input) that justifies a block"
    elif expected == "🔴 BLOCK":
        fix = "write 🔴 BLOCK, or downgrade the 🔴 finding to ⚠️ if you cannot name its triggering input"
    else:
        fix = f"write {expected}"
    return [Finding(LEVEL_ERROR, line, "VERDICT-MISMATCH", f"verdict is {given} but {reasons[expected]}", fix)]


def check_rule_id_leaks(parsed):
    """Rule IDs in the sections' text; the header is PR metadata (a title may say anything)."""
    found = []
    for number, line in (item for section in parsed.sections for item in section.content()):
        for rule_id in rule_ids_in(line):
            found.append(Finding(LEVEL_ERROR, number, "RULE-ID-LEAK", f"internal rule ID {rule_id!r} appears in the report",
                                 "describe the concern in words; rule IDs stay inside the skill"))
    return found


@lru_cache(maxsize=1)
def catalog_rule_ids():
    """The catalog's rule IDs, upper-cased (D1b -> D1B); empty when the catalog cannot be read."""
    try:
        return frozenset(load_catalog().rule_ids())
    except CatalogError:
        return frozenset()


def rule_ids_in(line):
    """Rule IDs written where they refer to the catalog; model names, GPUs and topologies are not.

    Review prose is full of ID-shaped tokens (DeepSeek-R1, V3, TP8, H100, a P4→D8 topology), so a
    token counts only in a rule-like position: after a word naming a rule ("规则 D8", "rule A3",
    "违反 P1–P4"; any ID shape), or, for the catalog's own IDs, after a pointer ("按 V2", "参见 P2"),
    before a rule word ("B3 规则"),
    alone in brackets ("（P4）", "(B1、D1b)"), as a line's label ("HK：…"), alone in a code span
    (`G1b`), or listed with another catalog ID of another letter ("B1、D1b"). A priority scale
    ("P0/P1 问题", "P1 优先级") and a version ("vLLM V1", "V1 引擎") never count.
    """
    catalog = catalog_rule_ids()
    hits = []
    for span in INLINE_CODE.finditer(line):
        inner = span.group(0).strip("`").strip()
        if inner.upper() in catalog:
            hits.append(inner)
    prose = INLINE_CODE.sub(lambda m: " " * len(m.group(0)), URL.sub(lambda m: " " * len(m.group(0)), line))
    for group in ID_GROUP.finditer(prose):
        names = [token.group(0) for token in re.finditer(ID_TOKEN, group.group(0))]
        before, after = prose[:group.start()], prose[group.end():]
        if PRIORITY_AFTER.match(after) or PRIORITY_BEFORE.search(before) or any(name[0] == "P" and name.upper() not in catalog for name in names):
            continue
        if VERSION_AFTER.match(after) or TOPOLOGY_ARROW.search(before) or TOPOLOGY_ARROW.match(after):
            continue
        if RULE_NAMED_BEFORE.search(before):
            hits.extend(name for name in names if RULE_ID_SHAPE.fullmatch(name))
            continue
        known = [name for name in names if name.upper() in catalog]
        if known and RULE_POINTER_BEFORE.search(before):
            hits.extend(known)
            continue
        if not known or (names[0][0] == "V" and VERSION_BEFORE.search(before)):
            continue
        stripped_before, stripped_after = before.rstrip(), after.lstrip()
        bracketed = (stripped_before[-1:] in tuple(OPENING_BRACKETS) and stripped_after[:1] in tuple(CLOSING_BRACKETS)
                     and len(known) == len(names))
        labelled = bool(LABEL_BEFORE.match(before)) and bool(LABEL_AFTER.match(after))
        listed = len(known) >= 2 and len({name[0] for name in known}) >= 2
        if bracketed or labelled or listed or RULE_WORD_AFTER.match(after):
            hits.extend(known)
    return hits


def check_length(parsed):
    if len(parsed.lines) <= fmt.MAX_LINES:
        return []
    return [Finding(LEVEL_ERROR, fmt.MAX_LINES + 1, "LENGTH", f"the report has {len(parsed.lines)} lines (limit {fmt.MAX_LINES})",
                    "shorten the change summary and merge or drop minor findings")]


def check_language(parsed, lang):
    cjk, words = prose_language_units(parsed)
    if cjk + words < MIN_PROSE_UNITS:
        return []
    share = cjk / (cjk + words)
    first_line = parsed.sections[0].line if parsed.sections else 1
    if lang == "zh" and share < MIN_CJK_SHARE_ZH:
        return [Finding(LEVEL_ERROR, first_line, "LANGUAGE",
                        f"prose is {share:.0%} Chinese (needs ≥ {MIN_CJK_SHARE_ZH:.0%})",
                        "write the prose in Simplified Chinese, or pass --lang en if the user asked for English")]
    if lang == "en" and share > MAX_CJK_SHARE_EN:
        return [Finding(LEVEL_ERROR, first_line, "LANGUAGE",
                        f"prose is {share:.0%} Chinese but --lang en was given (allowed ≤ {MAX_CJK_SHARE_EN:.0%})",
                        "write the prose in English, keeping only the contract's labels in Chinese")]
    return []


def prose_language_units(parsed):
    """(CJK characters, Latin words) in prose: no header, headings, tables, code, URLs, paths or labels."""
    cjk = words = 0
    for section in parsed.sections:
        for _, line in section.content():
            if line.lstrip().startswith(("|", "#")):
                continue
            text = CONTRACT_TOKENS.sub(" ", line)
            text = PATH_TOKEN.sub(" ", INLINE_CODE.sub(" ", LINK_TARGET.sub("]", URL.sub(" ", text))))
            cjk += len(CJK.findall(text))
            words += len(LATIN_WORD.findall(text))
    return cjk, words


def known_paths(pr_document=None, vllm_paths=None):
    """Every path a finding may cite: the PR's files (old names too) and the vLLM tree, with all their suffixes."""
    paths = set(vllm_paths or ())
    for item in (pr_document or {}).get("files") or []:
        paths.add(item["filename"])
        if item.get("previous_filename"):
            paths.add(item["previous_filename"])
    suffixes = set()
    for path in paths:
        parts = path.split("/")
        suffixes.update("/".join(parts[index:]) for index in range(len(parts)))
    return suffixes


def check_paths(parsed, known, pr_given=True, tree=None):
    """Warn (once per path) about vLLM paths cited in findings that exist neither in the PR nor in ``tree``.

    A bare path that starts in another repository's top folder (``aiter/ops/quant.py``) is not a
    vLLM path: it gets BARE-UPSTREAM-PATH, asking for the explicit OWNER/NAME@REF:PATH form.
    """
    fix = "cite the real path (check the diff or the PR's head commit)"
    if pr_given and tree is not None:
        where = f"is neither in the PR's files nor in {tree.name}"
        if not tree.from_pr:
            fix += "; if the file exists at the PR's head, pass --repo CLONE or --fetch-tree to check the PR's own tree"
    elif pr_given:
        where = "is not in the PR's files, and no vLLM tree is available to check it against"
        fix += f"; pass --repo CLONE or --fetch-tree, or run {SAVE_VLLM_TREE} to save vLLM main's tree"
    else:
        where = f"is not in {tree.name} (without --pr-json, files the PR adds are unknown)"
        fix += "; if the PR adds this file, pass --pr-json too"
    owners = upstream_owners()
    found = []
    reported = set()
    for finding in parsed.findings:
        for number, line in finding.body:
            for cited in cited_paths(line):
                if cited in known or cited in reported:
                    continue
                reported.add(cited)
                owner = owners.get(cited.split("/", 1)[0])
                if owner:
                    found.append(Finding(LEVEL_WARNING, number, "BARE-UPSTREAM-PATH",
                                         f"{cited} is a path in {owner}, not in vLLM",
                                         f"cite it as {owner}@<ref>:{cited} (add :<line> for a line), "
                                         f"the ref being the version vLLM pins"))
                else:
                    found.append(Finding(LEVEL_WARNING, number, "UNKNOWN-PATH", f"{cited} {where}", fix))
    return found


def cited_paths(line):
    """vLLM file paths cited in a line: citations of other repositories and URLs are not among them."""
    paths = []
    for match in PATH_TOKEN.finditer(without_citations(line)):
        path = match.group(1).removeprefix("./").rstrip(".")
        name = path.rsplit("/", 1)[-1]
        if FILE_SUFFIX.search(name) or name.startswith(EXTENSIONLESS_FILES):
            paths.append(path)
    return paths


def report_number(text):
    """The PR number in the report's title line, or None."""
    for line in text.splitlines():
        if line.strip():
            match = TITLE_LINE.match(line.strip())
            return int(match.group(1)) if match else None
    return None
