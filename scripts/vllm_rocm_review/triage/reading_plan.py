"""Which catalog sections this PR needs, and what fraction of the catalog that is.

Progressive disclosure: the plan cuts out the sections ``checks.reading_plan`` names
(core discipline always; the AI-diagnostic section for deep reviews; the mori appendix with the mori rule,
when the diff touches mori code)
and the body of every rule a diff family derived, plus housekeeping; a deep review (conditions in
``checks.deep_review``: Tier-1 files, the quantized-MoE method files, a large product-code change,
mori, performance claims) also cuts out the bodies of the
rules a PR type mandates. Every other selected rule is a one-line checklist item with its line range.
Rule bodies are held to ``reading_plan.budget`` (a fraction of the catalog): family-derived bodies
come first, then type-mandated ones, each ranked by how often the rule body names the touched files;
the first body past the budget and every one ranked below it become checklist lines instead, so
the plan stays small as the catalog grows.
``fraction`` counts the plan's lines against the whole catalog.
"""

import posixpath


from ..core.catalog import rule_anchor
from .families import ALWAYS_RULE, has_diff_evidence
from ..core.skill_paths import RULES_CATALOG
from ..core.skill_paths import bundle_relative

CATALOG_NAME = bundle_relative(RULES_CATALOG)


def product_lines(config, scope_diffs, files):
    """Changed lines (added + removed) of the in-scope files of kind ``code`` (no test, doc, CI, build...).

    GitHub's per-file counts come first, since a file too large for a patch still counts; the
    parsed diff counts a file the ``files`` list lacks.
    """
    counts = {entry.get("filename"): (entry.get("additions"), entry.get("deletions")) for entry in files or []}
    total = 0
    for diff in scope_diffs:
        if config.file_kinds(diff.path) != ["code"]:
            continue
        added, removed = counts.get(diff.path, (None, None))
        if isinstance(added, int) and isinstance(removed, int):
            total += added + removed
        else:
            total += len(diff.added) + len(diff.removed)
    return total


def deep_reasons(config, relevance_level, tiers, pr_types, families, rules, perf_check, scope_paths=(), lines=0):
    """Why this review must be deep; empty for a quick review.

    ``scope_paths`` are the changed files ROCm runs (the gate's scope) and ``lines`` their
    changed product-code lines (see ``product_lines``).
    """
    if relevance_level == "none":
        return []
    settings = config.checks["deep_review"]
    reasons = []
    deep_tiers = [entry["path"] for entry in tiers if entry["tier"] in settings["tiers"]]
    if deep_tiers:
        reasons.append(f"backbone tier {'/'.join(str(t) for t in settings['tiers'])} file(s): {_some(deep_tiers)}")
    deep_paths = [path for path in scope_paths if settings["paths"].matching(path)]
    if deep_paths:
        reasons.append(f"quantized-MoE method or oracle file(s): {_some(deep_paths)}")
    if settings["product_lines"] is not None and lines > settings["product_lines"]:
        reasons.append(f"{lines} changed product-code lines (over {settings['product_lines']})")
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


def _some(paths, shown=3):
    return ", ".join(paths[:shown]) + (f" (+{len(paths) - shown})" if len(paths) > shown else "")


def plan(config, catalog, relevance_level, rules, judgment_rules, tiers, pr_types, families, perf_check,
         touched_paths=(), scope_paths=(), lines=0):
    """Sections to read in full, and the one-line checklist of the other rules.

    A rule's body is cut out when a diff family derived it (the diff shows its trigger), when
    it is the always-applied housekeeping rule, or, in a deep review, when a PR type mandates
    it, as long as the budget allows; every other rule, and every judgment rule, is listed by
    its heading: apply it, and open its body (the line range is given) when its concern may apply.
    """
    reasons = deep_reasons(config, relevance_level, tiers, pr_types, families, rules, perf_check, scope_paths, lines)
    settings = config.checks["reading_plan"]
    rule_ids = [rule["id"] for rule in rules]
    anchors = list(settings["always"])
    if reasons:
        anchors += settings["deep"]
    if relevance_level != "none":
        for rule in rule_ids:
            anchors += [anchor for anchor in settings["with_rule"].get(rule, [])
                        if _touched(settings["only_when_touched"].get(anchor), pr_types, families, touched_paths)]
    anchors = list(dict.fromkeys(anchors))
    candidates = [rule["id"] for rule in rules if has_diff_evidence(rule) or reasons]
    listed_anyway = len(rules) - len(candidates) + len(judgment_rules)
    bodies, over_budget = _within_budget(catalog, anchors, candidates, rules, touched_paths,
                                         settings["budget"], listed_anyway)
    anchors += [rule_anchor(rule) for rule in bodies]
    listed = [rule["id"] for rule in rules if rule["id"] not in bodies] + [rule["id"] for rule in judgment_rules]
    result = {
        "depth": "deep" if reasons else "quick",
        "deep_reasons": reasons,
        "catalog": CATALOG_NAME,
        "budget": settings["budget"],
        "over_budget": over_budget,
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


def _touched(condition, pr_types, families, touched_paths):
    """Whether the diff touches a section's subject: no condition, a changed path of one of its PR
    types, or one of its families fired on a changed line (not on the title or body)."""
    if condition is None:
        return True
    paths = set(touched_paths)
    if any(pr_type["id"] in condition["pr_types"] and paths.intersection(pr_type["matched"]) for pr_type in pr_types):
        return True
    return any(family["id"] in condition["families"] and any(item["path"] for item in family["evidence"])
               for family in families)


def _within_budget(catalog, anchors, candidates, rules, touched_paths, budget, listed_anyway):
    """The candidate rules whose bodies fit the budget, and those demoted to checklist lines.

    The budget covers the planned sections, the kept bodies and one checklist line for every
    other rule (``listed_anyway`` non-candidates, plus each demoted candidate).
    Housekeeping always fits; then family-derived rules before type-mandated ones, each group
    ranked by relevance to the touched files (see ``_relevance``), catalog order breaking ties.
    The first body that does not fit ends the cut: it and every rule ranked below it are demoted,
    so a demoted rule never outranks a kept one.
    """
    limit = int(budget * catalog.line_count)
    by_id = {rule["id"]: rule for rule in rules}
    order = {rule_id: position for position, rule_id in enumerate(candidates)}
    ranked = sorted(candidates, key=lambda rule_id: (
        rule_id != ALWAYS_RULE, not has_diff_evidence(by_id[rule_id]),
        -_relevance(catalog, rule_id, touched_paths), order[rule_id]))
    kept, demoted = [], []
    for rule_id in ranked:
        trial = anchors + [rule_anchor(rule) for rule in kept + [rule_id]]
        fits = catalog.covered_lines(trial) + listed_anyway + len(candidates) - len(kept) - 1 <= limit
        if rule_id == ALWAYS_RULE or (fits and not demoted):
            kept.append(rule_id)
        else:
            demoted.append(rule_id)
    return sorted(kept, key=order.get), sorted(demoted, key=order.get)


def _relevance(catalog, rule_id, touched_paths):
    """How many touched files (by path, else by file name) a rule's body names."""
    body = "\n".join(catalog.section_lines(rule_anchor(rule_id)) or ())
    return sum(1 for path in touched_paths if path in body or posixpath.basename(path) in body)


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
