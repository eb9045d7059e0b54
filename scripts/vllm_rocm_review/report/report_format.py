"""The review report's format, as data: one definition for the scaffold and the checker.

The format is the seed SKILL.md's Step 8 contract (header, five numbered sections,
severity-sorted findings, verdict). triage's report scaffold renders from these
constants and check_report.py parses against them, so the two cannot disagree.

The trigger patterns at the bottom are about the report's language: they say what a
🔴 finding must spell out to count as naming "a concrete triggering input" (a shape,
dtype, arch, config, sequence length or batch size, env setting or model). They are
vocabulary for reading prose, not facts about vLLM's code, so they live here rather than
in references/rocm-surface.yaml.
"""

import re
from datetime import datetime, timezone

# --- header ------------------------------------------------------------------

TITLE_TEMPLATE = "# PR #{number}: {title}"
RELEVANCE_FIELD = "ROCm 相关性"
# Blockquote lines of the header, each a tuple of field names joined by " | ".
HEADER_LAYOUT = (
    ("Author", "State", "Date"),
    ("Branch", "Labels"),
    ("Changes", RELEVANCE_FIELD),
)
HEADER_FIELDS = tuple(field for line in HEADER_LAYOUT for field in line)
FIELD_SEPARATOR = " | "
NO_LABELS = "—"
STATES = ("OPEN", "MERGED", "CLOSED")
RELEVANCE_LABELS = {"full": "完全相关", "partial": "部分相关", "none": "不相关"}
CHANGES_TEMPLATE = "+{additions} -{deletions} lines across {changed_files} files"
BRANCH_TEMPLATE = "`{head}` → `{base}`"

# --- sections ----------------------------------------------------------------

SECTION_TITLES = (
    "动机 (Motivation)",
    "代码改动总结 (Change Summary)",
    "Review 意见 (Findings)",
    "现有讨论 (Existing Discussion)",
    "结论 (Verdict)",
)
SECTION_HEADINGS = tuple(f"## {number}. {title}" for number, title in enumerate(SECTION_TITLES, 1))
FINDINGS_SECTION = 3
VERDICT_SECTION = 5

# --- findings ----------------------------------------------------------------

# Severity emoji in sort order, with the names the seed gives them.
SEVERITIES = ("🔴", "⚠️", "📝")
SEVERITY_NAMES = {"🔴": "必须修复", "⚠️": "建议修复", "📝": "建议/备注"}
FINDING_TYPES = ("正确性", "性能", "设计", "注释/文档", "测试", "兼容性", "可维护性", "安全")
VERIFICATION_TAGS = ("[已验证]", "[推测]")
BULLET_LABELS = ("问题", "影响", "行动")
FINDING_TEMPLATE = "**{severity}【{type}】{title}** `{tag}`"
BULLET_TEMPLATE = "- **{label}**: {text}"
# 行动 is a concrete request to the author: a request word followed by what to do. The words
# exclude the compounds that only contain them (对应, 请求, 不需要, 应用 …).
ACTION_REQUEST = re.compile(
    r"(?:建议|(?<![申邀])请(?![求])|(?<![不无否])需要|(?<![对相响适供反效])应(?:当|该)?(?![用答])|务必|必须|"
    r"要求|追问|\bplease\b|\bshould\b|\bmust\b|\bsuggest\w*|\bask\b|\bneeds? to\b)"
    r"\s*[:：]?\s*(?P<object>[^。；;!！?？]*)", re.IGNORECASE)
# The object needs substance: two CJK characters, a Latin word of two letters, or a code span.
ACTION_OBJECT = re.compile(r"[\u4e00-\u9fff]{2}|[A-Za-z]{2}|`[^`]+`")
ACTION_EXAMPLES = ("建议作者…, 请…, 需要…, 应当/应该…, 务必/必须…, 建议 review 时追问…, "
                   "or in English The author should… / Please…")
RECOMMENDED_FINDINGS = (3, 10)
MAX_LINES = 400

# --- summary table (意见类型 × 数量) -------------------------------------------

SUMMARY_TABLE_HEADER = ("意见类型", "数量")
COUNT_COLUMN_NAMES = ("数量", "Count")
TOTAL_ROW_NAMES = ("合计", "总计", "Total")

# --- verdict -----------------------------------------------------------------

VERDICTS = ("✅ LGTM", "⚠️ NEEDS WORK", "🔴 BLOCK")
VERDICT_FOR_SEVERITY = {"🔴": "🔴 BLOCK", "⚠️": "⚠️ NEEDS WORK", None: "✅ LGTM"}
NO_FINDINGS_SENTENCE = "未发现需要提出的 review 意见，因此省略第 3 节。"
# How 结论 may say there are no findings (when section 3 is left out).
NO_FINDINGS_PATTERNS = (
    r"(无|没有|未发现|未提出|未找到|不存在)[^。\n]{0,16}(意见|问题|发现)",
    r"\bno (review )?(findings|issues|problems)\b",
    r"省略第\s*3\s*节",
)

PLACEHOLDER = "TODO(agent)"

# --- what counts as naming a concrete triggering input (🔴 gate) --------------

TRIGGER_PATTERNS = {
    "dtype": r"(?<![A-Za-z0-9])(?:fp8|fp4|fp6|fp16|bf16|fp32|int4|int8|uint8|int32|int64|"
             r"float8\w*|float16|bfloat16|float32|e4m3\w*|e5m2\w*|mxfp[468]|nvfp4|w8a8|w4a8|w4a16)(?![A-Za-z0-9])",
    "arch": r"(?<![A-Za-z0-9])(?:gfx[0-9a-f]{3,4}|MI\d{3}[A-Z]?|CDNA\s?\d|RDNA\s?\d|Navi\s?\d+|"
            r"H100|H200|H20|A100|B200|GB200)(?![A-Za-z0-9])",
    "shape": r"\[\s*[A-Za-z0-9_*+-]+\s*(?:,\s*[A-Za-z0-9_*+-]+\s*)+\]|(?<![\w.])\d+\s*[x×]\s*\d+(?![\w.])",
    "config": r"(?<![A-Za-z0-9])(?:TP|EP|DP|PP)\s*=?\s*\d+(?![\d])|"
              r"(?<![\w.])[A-Za-z_][A-Za-z0-9_.]*\s*(?:==|=|>=|<=|>|<|≥|≤)\s*-?\d|"
              r"(?<![\w-])--[a-z][a-z0-9]*(?:-[a-z0-9]+)+",
    # Sequence length, context length, batch size or token count: "32k tokens", "seq_len 8192", "batch size 256".
    "size": r"(?<![\w.])\d+(?:\.\d+)?\s*[km]?\s*(?:tokens?|toks?|context|上下文)(?![A-Za-z])|"
            r"(?<![A-Za-z0-9_])(?:seq(?:uence)?[ _-]?len(?:gth)?|max[ _]model[ _]len|max[ _]num[ _]seqs|"
            r"max[ _]num[ _]batched[ _]tokens|context[ _-]?len(?:gth)?|batch[ _-]?size|batch|bs|num[ _]tokens|"
            r"上下文长度|序列长度|批大小)\s*(?:[:=：]|of|为|是)?\s*\d+",
    "env": r"(?<![A-Za-z0-9_])VLLM_[A-Z0-9_]+\s*=\s*\S+",
    "model": r"(?<![A-Za-z0-9])(?:DeepSeek|Kimi|Qwen|Llama|Mixtral|Mistral|GPT-OSS|MiniMax|Gemma|"
             r"GLM|Phi|Inkling|Grok)[\w.-]*",
}


def is_concrete_request(action):
    """Does 行动 ask the author (or the review) to do something, and say what?"""
    return any(ACTION_OBJECT.search(match.group("object")) for match in ACTION_REQUEST.finditer(action))


def expected_header(pr_document):
    """The header values a report about this PR must carry, keyed "Title" plus HEADER_FIELDS.

    ROCm 相关性 is absent: it is the reviewer's judgment (triage's relevance), not PR metadata.
    """
    pr = pr_document["pr"]
    labels = [label["name"] if isinstance(label, dict) else str(label) for label in pr.get("labels") or []]
    return {
        "Title": TITLE_TEMPLATE.format(number=pr["number"], title=pr["title"].strip()),
        "Author": f"@{pr['author']}",
        "State": str(pr["state"]).upper(),
        "Date": utc_date(pr["created_at"]),
        "Branch": BRANCH_TEMPLATE.format(head=pr["head"]["ref"], base=pr["base"]["ref"]),
        "Labels": ", ".join(labels) if labels else NO_LABELS,
        "Changes": CHANGES_TEMPLATE.format(
            additions=pr["additions"], deletions=pr["deletions"], changed_files=pr["changed_files"]
        ),
    }


def render_header_lines(pr_document, relevance):
    """The report's first lines: the title, a blank line, and the three blockquote lines."""
    values = dict(expected_header(pr_document))
    values[RELEVANCE_FIELD] = RELEVANCE_LABELS[relevance]
    quote_lines = [
        "> " + FIELD_SEPARATOR.join(f"**{field}**: {values[field]}" for field in fields) for fields in HEADER_LAYOUT
    ]
    return [values["Title"], "", *quote_lines]


def render_summary_table(severity_counts):
    """The canonical 意见类型 × 数量 table, one row per severity (zero rows included)."""
    lines = [
        f"| {SUMMARY_TABLE_HEADER[0]} | {SUMMARY_TABLE_HEADER[1]} |",
        "|---|---|",
    ]
    for severity in SEVERITIES:
        lines.append(f"| {severity} {SEVERITY_NAMES[severity]} | {severity_counts.get(severity, 0)} |")
    return lines


def verdict_for(severities):
    """The verdict the seed's rules give for findings of these severities."""
    present = set(severities)
    for severity in SEVERITIES[:2]:
        if severity in present:
            return VERDICT_FOR_SEVERITY[severity]
    return VERDICT_FOR_SEVERITY[None]


def utc_date(timestamp):
    """YYYY-MM-DD of an ISO-8601 timestamp, converted to UTC (naive means UTC).

    A timestamp that is not ISO-8601 keeps its first ten characters, so a header can still be rendered.
    """
    try:
        moment = datetime.fromisoformat(str(timestamp).replace("Z", "+00:00"))
    except ValueError:
        return str(timestamp)[:10]
    if moment.tzinfo is not None:
        moment = moment.astimezone(timezone.utc)
    return moment.strftime("%Y-%m-%d")


TRIGGER_REGEXES = {name: re.compile(pattern, re.IGNORECASE if name != "env" else 0)
                   for name, pattern in TRIGGER_PATTERNS.items()}
