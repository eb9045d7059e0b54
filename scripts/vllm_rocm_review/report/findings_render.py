"""Render section 3 of the report from merged findings, in the report contract's exact form.

The heading, summary table, finding heading and bullets come from report_format, the
checker's own definitions, so the rendered section passes check_report.py as written; the
agent still edits the prose. Each finding stays compact: its title, then one line each for
problem, impact and action, cut after SENTENCES sentences (a 🔴 keeps whatever names its
trigger), and at most LOCATIONS of the locations the problem does not already name.
"""

import re

from . import report_format as fmt
from .report_check import text_names_trigger

VERIFIED = "已验证"
UNVERIFIED_NOTE = "（未经验证）"
SENTENCE_ENDS = ("。", "！", "？", "；", ".", "!", "?", ";")
SENTENCES = 2
LOCATIONS = 3
# A sentence ends at a Chinese full stop (or ! ? ;), or at an English one followed by a space.
SENTENCE_END = re.compile(r"(?<=[。！？；])|(?<=[.!?;])(?= )")


def render_findings_section(findings, merge_candidates=()):
    """The lines of section 3 (heading, 意见类型 × 数量 table, findings); empty when there are none.

    ``merge_candidates`` (pairs merge_findings.py left undecided) become one reminder comment each.
    """
    if not findings:
        return []
    counts = {severity: sum(1 for finding in findings if finding["severity"] == severity) for severity in fmt.SEVERITIES}
    lines = [fmt.SECTION_HEADINGS[fmt.FINDINGS_SECTION - 1], "", *fmt.render_summary_table(counts)]
    for finding in findings:
        lines += ["", *render_finding(finding)]
    reminders = [merge_reminder(pair) for pair in merge_candidates]
    return lines + ([""] + reminders if reminders else [])


def render_finding(finding):
    """One finding: the bold heading with its tag, then the bullets 问题 (with its locations), 影响, 行动."""
    tag = "[已验证]" if finding["evidence"] == VERIFIED else "[推测]"
    heading = fmt.FINDING_TEMPLATE.format(severity=finding["severity"], type=finding["type"],
                                          title=_one_line(finding["title"]), tag=tag)
    problem, impact, action = (_first_sentences(finding[key]) for key in ("problem", "impact", "action"))
    if finding["severity"] == "🔴" and not text_names_trigger(" ".join((finding["title"], problem, impact))):
        problem, impact = _one_line(finding["problem"]), _one_line(finding["impact"])
    if finding["evidence"] == "未经验证":
        problem = UNVERIFIED_NOTE + problem
    unnamed = [location for location in finding["locations"] if location not in problem]
    if unnamed:
        shown = "、".join(f"`{location}`" for location in unnamed[:LOCATIONS])
        more = f" 等 {len(unnamed)} 处" if len(unnamed) > LOCATIONS else ""
        problem += ("" if problem.endswith(SENTENCE_ENDS) else "。") + "位置：" + shown + more + "。"
    return [heading, *(fmt.BULLET_TEMPLATE.format(label=label, text=text)
                       for label, text in zip(fmt.BULLET_LABELS, (problem, impact, action)))]


def merge_reminder(pair):
    """A comment asking the agent to settle a merge candidate the validator left open."""
    first, second = (f"「{item['title']}」（{item['lens']} #{item['index']}）" for item in pair["candidates"])
    return f"<!-- 位置相近、可能重复的两条意见：{first} 与 {second}。是同一个问题就合并成一条，否则保留两条。 -->"


def _first_sentences(text):
    sentences = [part for part in SENTENCE_END.split(_one_line(text)) if part.strip()]
    return "".join(sentences[:SENTENCES]).strip()


def _one_line(text):
    return " ".join(text.split())
