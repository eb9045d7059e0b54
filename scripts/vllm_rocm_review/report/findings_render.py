"""Render section 3 of the report from merged findings, in the report contract's exact form.

The heading, summary table, finding heading and bullets come from report_format, the
checker's own definitions, so the rendered section passes check_report.py as written; the
agent still edits the prose.
"""

from . import report_format as fmt

VERIFIED = "已验证"
UNVERIFIED_NOTE = "（未经验证）"
SENTENCE_ENDS = ("。", "！", "？", "；", ".", "!", "?", ";")


def render_findings_section(findings):
    """The lines of section 3 (heading, 意见类型 × 数量 table, findings); empty when there are none."""
    if not findings:
        return []
    counts = {severity: sum(1 for finding in findings if finding["severity"] == severity) for severity in fmt.SEVERITIES}
    lines = [fmt.SECTION_HEADINGS[fmt.FINDINGS_SECTION - 1], "", *fmt.render_summary_table(counts)]
    for finding in findings:
        lines += ["", *render_finding(finding)]
    return lines


def render_finding(finding):
    """One finding: the bold heading with its tag, then the bullets 问题 (with its locations), 影响, 行动."""
    tag = "[已验证]" if finding["evidence"] == VERIFIED else "[推测]"
    heading = fmt.FINDING_TEMPLATE.format(severity=finding["severity"], type=finding["type"],
                                          title=_one_line(finding["title"]), tag=tag)
    problem = _one_line(finding["problem"])
    if finding["evidence"] == "未经验证":
        problem = UNVERIFIED_NOTE + problem
    unnamed = [location for location in finding["locations"] if location not in problem]
    if unnamed:
        problem += ("" if problem.endswith(SENTENCE_ENDS) else "。") + "位置：" + "、".join(f"`{l}`" for l in unnamed) + "。"
    texts = (problem, _one_line(finding["impact"]), _one_line(finding["action"]))
    return [heading, *(fmt.BULLET_TEMPLATE.format(label=label, text=text)
                       for label, text in zip(fmt.BULLET_LABELS, texts))]


def _one_line(text):
    return " ".join(text.split())
