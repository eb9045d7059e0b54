"""Which catalog sections this PR needs, and what fraction of the catalog that is.

Progressive disclosure: the plan cuts out the sections ``checks.reading_plan`` names
(core discipline always; the AI-diagnostic section for deep reviews; the mori appendix with the mori rule)
and the body of every rule a diff family derived, plus housekeeping. A rule that only a
PR type mandates is listed by its heading in a one-line checklist with its line range,
to open when its concern may apply. ``fraction`` counts those lines against the whole
catalog. A deep review (conditions in ``checks.deep_review``: Tier-1 files, mori,
performance claims) reads the planned sections first and then the whole catalog.
"""

from ..core.catalog import rule_anchor
from .families import has_diff_evidence
from ..core.skill_paths import RULES_CATALOG
from ..core.skill_paths import bundle_relative

CATALOG_NAME = bundle_relative(RULES_CATALOG)


def deep_reasons(config, relevance_level, tiers, pr_types, families, rules, perf_check):
    """Why this review must be deep; empty for a quick review."""
    if relevance_level == "none":
        return []
    settings = config.checks["deep_review"]
    reasons = []
    deep_tiers = [entry["path"] for entry in tiers if entry["tier"] in settings["tiers"]]
    if deep_tiers:
        reasons.append(f"backbone tier {'/'.join(str(t) for t in settings['tiers'])} file(s): {', '.join(deep_tiers[:3])}"
                       + (f" (+{len(deep_tiers) - 3})" if len(deep_tiers) > 3 else ""))
    types = [pr_type["id"] for pr_type in pr_types if pr_type["id"] in settings["pr_types"]]
    if types:
        reasons.append("PR types: " + ", ".join(types))
    fired = [family["id"] for family in families if family["id"] in settings["families"]]
    if fired:
        reasons.append("diff families: " + ", ".join(fired))
    rule_ids = {rule["id"] for rule in rules}
    deep_rules = [rule for rule in settings["rules"] if rule in rule_ids]
    if deep_rules:
        reasons.append("rules that need the full catalog: " + ", ".join(deep_rules))
    if settings["perf_claims"] and perf_check.get("items"):
        reasons.append(f"performance claims in the PR text ({len(perf_check['items'])} number(s))")
    return reasons


def plan(config, catalog, relevance_level, rules, judgment_rules, tiers, pr_types, families, perf_check):
    """Sections to read in full, and the one-line checklist of the other rules.

    A rule's body is cut out when a diff family derived it (the diff shows its trigger) or
    when it is the always-applied housekeeping rule; a rule that only a PR type mandates,
    and every judgment rule, is listed by its heading: apply it, and open its body (the
    line range is given) when its concern may apply.
    """
    reasons = deep_reasons(config, relevance_level, tiers, pr_types, families, rules, perf_check)
    settings = config.checks["reading_plan"]
    rule_ids = [rule["id"] for rule in rules]
    anchors = list(settings["always"])
    if reasons:
        anchors += settings["deep"]
    if relevance_level != "none":
        for rule in rule_ids:
            anchors += settings["with_rule"].get(rule, [])
    bodies = [rule["id"] for rule in rules if has_diff_evidence(rule)]
    anchors += [rule_anchor(rule) for rule in bodies]
    anchors = list(dict.fromkeys(anchors))
    listed = [rule["id"] for rule in rules if rule["id"] not in bodies] + [rule["id"] for rule in judgment_rules]
    result = {
        "depth": "deep" if reasons else "quick",
        "deep_reasons": reasons,
        "catalog": CATALOG_NAME,
        "then_read_in_full": CATALOG_NAME if reasons else None,
    }
    sections, checklist, missing = [], [], []
    for anchor in anchors:
        section = catalog.section(anchor)
        if section is None:
            missing.append(anchor)
        else:
            sections.append(_describe(section))
    for rule in listed:
        section = catalog.section(rule_anchor(rule))
        if section is None:
            missing.append(rule_anchor(rule))
        else:
            checklist.append({"id": rule, **_describe(section)})
    lines = catalog.covered_lines(anchors) + len(checklist)
    result.update({
        "sections": sections,
        "checklist": checklist,
        "missing": missing,
        "lines": lines,
        "catalog_lines": catalog.line_count,
        "fraction": round(lines / catalog.line_count, 3),
    })
    return result


def _describe(section):
    """Anchor, heading and 1-based line range of a catalog section."""
    return {"anchor": section.anchor, "title": section.title,
            "start_line": section.start + 1, "end_line": section.end, "lines": section.line_count}


def expand(catalog, reading_plan):
    """The text of every planned section, then the checklist headings, in plan order."""
    parts = [catalog.cut(section["anchor"]) for section in reading_plan["sections"]]
    if reading_plan["checklist"]:
        parts.append("Checklist (apply each; open the body at the given lines when its concern may apply):\n"
                     + "\n".join(f"- {item['title']} (lines {item['start_line']}-{item['end_line']})"
                                  for item in reading_plan["checklist"]) + "\n")
    return "\n".join(parts)
