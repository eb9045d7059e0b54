"""Render the review report's skeleton: the exact header, five sections, TODO placeholders.

The header comes from report_format (the checker's own definition), so a scaffold whose
placeholders are all replaced passes the header checks by construction; every
placeholder line carries report_format.PLACEHOLDER, which the checker rejects.
"""

from pathlib import Path

import jinja2

from . import report_format as fmt

TEMPLATE_DIR = Path(__file__).resolve().parent / "templates"
TEMPLATE_NAME = "report-scaffold.md.j2"


def render_scaffold(document, result):
    """The scaffold text for this PR document and its triage result."""
    environment = jinja2.Environment(loader=jinja2.FileSystemLoader(str(TEMPLATE_DIR)), undefined=jinja2.StrictUndefined,
                                     keep_trailing_newline=True, autoescape=False)
    template = environment.get_template(TEMPLATE_NAME)
    return template.render(
        header_lines=fmt.render_header_lines(document, result["relevance"]),
        headings=fmt.SECTION_HEADINGS,
        summary_table=fmt.render_summary_table(dict.fromkeys(fmt.SEVERITIES, fmt.PLACEHOLDER)),
        verdicts=" / ".join(fmt.VERDICTS),
        relevance=result["relevance"],
        modules=_modules(document),
        rocm_files=_paths(result["rocm_files"]),
        shared_files=_paths(result["shared_files"]),
        linked_issues=", ".join(f"#{issue['number']}" for issue in document.get("linked_issues") or []),
        questions=_questions(result),
        discussion=_discussion(document),
    )


def _paths(entries, limit=400):
    """Comma-separated paths, cut after a whole path once ``limit`` characters are reached."""
    shown = []
    for entry in entries:
        if shown and len(", ".join(shown + [entry["path"]])) > limit:
            return ", ".join(shown) + f" and {len(entries) - len(shown)} more"
        shown.append(entry["path"])
    return ", ".join(shown)


def _modules(document):
    """Changed files grouped by their first two path components, with counts."""
    counts = {}
    for entry in document.get("files") or []:
        parts = entry["filename"].split("/")
        key = "/".join(parts[:2]) if len(parts) > 2 else entry["filename"]
        counts[key] = counts.get(key, 0) + 1
    return ", ".join(f"{key} ({count})" for key, count in sorted(counts.items()))[:400]


def _questions(result):
    """Raised flags and mechanical checks that the report must address."""
    questions = [f"{name} — {flag['detail']}" for name, flag in result["flags"].items()
                 if flag["state"] in ("raised", "unknown")]
    for name in ("mori-symbols", "perf-claims", "prompt-injection", "env-vars", "context"):
        check = result["checks"].get(name)
        if check is None:
            continue
        if check["status"] in ("attention", "unchecked"):
            questions.append(f"{name} — {check['summary']}" + (f" (NOTICE: {check['notice']})" if check.get("notice") else ""))
    return questions


def _discussion(document):
    counts = {key: len(document.get(key) or []) for key in ("issue_comments", "review_comments", "reviews")}
    if not any(counts.values()):
        return "the PR document has no comments or reviews; say so in one sentence."
    return (f"substantive points only from {counts['issue_comments']} comment(s), {counts['review_comments']} inline "
            f"comment(s) and {counts['reviews']} review(s); skip lgtm/thanks; note unresolved threads.")
