"""The compact text digest of a triage result: what the reviewing agent reads first."""

from .families import has_diff_evidence
from .mechanical import ENV_FLAGGED

FILES_SHOWN = 8
EVIDENCE_SHOWN = 2
CHECK_ITEMS_SHOWN = 4
FLAGGED_SHOWN = 8  # items that need the reviewer ([unverified] claims, unregistered or removed env vars) shown up to this many


def render_digest(result):
    lines = []
    pr = result["pr"]
    lines.append(f"# Triage of PR #{pr['number']}: {pr['title']}")
    lines.append(f"{pr['files']} files, +{pr['additions']} -{pr['deletions']}, diff from {pr['diff_source'] or 'unknown'}"
                 + (f"; no patch for {len(pr['files_without_patch'])} file(s): read them in the checkout or sources"
                    if pr["files_without_patch"] else ""))
    if "since" in result:
        lines += _since(result["since"])
    lines += _relevance(result)
    lines += _rules(result)
    lines += _tiers(result)
    lines += _plan(result["reading_plan"])
    lines += _lenses(result["lenses"])
    lines += _checks(result["checks"], result["pr"]["number"])
    return "\n".join(lines) + "\n"


def _since(since):
    """What changed since the reviewed head: the PR's files and their new-side hunks."""
    lines = ["", f"## Since {since['reviewed_head'][:7]}",
             f"previous review: head {since['reviewed_head'][:7]}; now {since['head'][:7]}"
             + ("; the branch was rewritten (rebase or force-push)" if since["rebased"] else "")]
    if not since["files"]:
        lines.append("no PR file changed since: only the base moved; confirm the previous verdict still holds")
    else:
        lines.append(f"{len(since['files'])} PR file(s) changed since; review these hunks, the rest was reviewed:")
    for entry in since["files"][:FILES_SHOWN * 2]:
        moved = f" (renamed from {entry['old_path']})" if entry["status"] == "renamed" else ""
        hunks = ", ".join(f"lines {hunk['start']}-{hunk['start'] + max(hunk['lines'], 1) - 1}"
                          + (f" ({clip(hunk['section'], 40)})" if hunk["section"] else "") for hunk in entry["hunks"][:6])
        more = f" … {len(entry['hunks']) - 6} more" if len(entry["hunks"]) > 6 else ""
        lines.append(f"  {entry['path']}{moved} [{entry['status']}]: {hunks or 'no hunks (binary or mode change)'}{more}")
    if len(since["files"]) > FILES_SHOWN * 2:
        lines.append(f"  … {len(since['files']) - FILES_SHOWN * 2} more in --json")
    if since["outside_pr"]:
        lines.append(f"{len(since['outside_pr'])} other file(s) differ between the heads but are not the PR's "
                     "changes (the base moved); not for review")
    lines.append("the reading plan below covers only the rules these changes bring")
    return lines


def _relevance(result):
    evidence = result["relevance_evidence"]
    lines = ["", f"## Relevance: {result['relevance']}", evidence["reason"]]
    for where in ("title", "body"):
        hits = evidence[where]
        parts = []
        if hits["strong"]:
            parts.append("strong " + ", ".join(f"{hit['marker']} {hit['match']!r}" for hit in hits["strong"]))
        if hits["weak"]:
            weak = ", ".join(f"{hit['marker']} {hit['match']!r}" for hit in hits["weak"])
            parts.append(f"weak (not counted alone) {weak}")
        if hits["suppressed"]:
            parts.append("suppressed " + ", ".join(f"{hit['marker']} by {hit['guard']}" for hit in hits["suppressed"]))
        if parts:
            lines.append(f"{where} markers: " + "; ".join(parts))
    lines += _file_list("ROCm-exposed files", result["rocm_files"])
    lines += _file_list("Shared files (check for cross-backend regressions)", result["shared_files"])
    lines += _file_list("Set aside: shared files whose changes ROCm never runs (overrule if it does)",
                        result["relevance_evidence"].get("demoted") or [])
    if result["relevance"] == "none":
        lines.append("Light path: semantic understanding, housekeeping (HK) and the verdict only; "
                     "AITER/mori-specific rules were skipped" + (f" ({' '.join(result['skipped_rules'])})"
                                                               if result["skipped_rules"] else "") + ".")
    return lines


def _file_list(title, entries):
    """One line per file; a reason already given for an earlier file is not repeated."""
    if not entries:
        return []
    lines = [f"{title} ({len(entries)}):"]
    said = {}
    for entry in entries[:FILES_SHOWN]:
        why = "; ".join(entry["why"])
        if why in said:
            lines.append(f"  {entry['path']} — same reason as {said[why]}")
        else:
            said[why] = entry["path"]
            lines.append(f"  {entry['path']} — {clip(why, 110)}")
    if len(entries) > FILES_SHOWN:
        lines.append(f"  … {len(entries) - FILES_SHOWN} more in --json")
    return lines


def _rules(result):
    lines = ["", "## PR types and rules"]
    lines.append("types: " + ", ".join(pr_type["id"] for pr_type in result["pr_types"]))
    for family in result["families"]:
        where = [_where(item) for item in family["evidence"][:EVIDENCE_SHOWN]]
        lines.append(f"family {family['id']} -> {' '.join(family['rules'])}: {'; '.join(where)}")
    with_evidence = [rule for rule in result["rules"] if has_diff_evidence(rule)]
    type_only = [rule for rule in result["rules"] if rule not in with_evidence]
    if with_evidence:
        lines.append("rules with diff evidence (read the body): " + "; ".join(
            f"{rule['id']} <- {', '.join(s['id'] for s in rule['sources'] if s['via'] == 'family') or 'always'}"
            for rule in with_evidence))
    if type_only:
        lines.append("rules by PR type only (checklist): " + " ".join(rule["id"] for rule in type_only))
    if result["judgment_rules"]:
        lines.append("by judgment: " + " ".join(rule["id"] for rule in result["judgment_rules"]))
    return lines


def _where(item):
    if item.get("path") and item.get("line"):
        return f"{item['path']}:{item['line']} `{clip(item['text'], 60)}`"
    if item.get("path"):
        return f"{item['path']} ({clip(item['text'], 60)})"
    return clip(item["text"], 80)


def clip(text, limit):
    """``text`` cut to at most ``limit`` characters at a word boundary, with … when cut."""
    if len(text) <= limit:
        return text
    cut = text[:limit - 1]
    space = cut.rstrip().rfind(" ")
    if space >= limit // 2:  # a word boundary that keeps most of the text; else cut inside the long token
        cut = cut[:space]
    return cut.rstrip(" ,;:(") + "…"


def _tiers(result):
    lines = ["", "## Backbone tiers and flags"]
    if result["tiers"]:
        for entry in result["tiers"][:FILES_SHOWN]:
            moved = f" (as {entry['as']})" if entry.get("as") else ""
            lines.append(f"  T{entry['tier']} {entry['path']}{moved}")
        if len(result["tiers"]) > FILES_SHOWN:
            lines.append(f"  … {len(result['tiers']) - FILES_SHOWN} more in --json")
    else:
        lines.append("  no backbone file touched")
    for name, flag in result["flags"].items():
        evidence = f" [{', '.join(flag['evidence'][:3])}]" if flag["evidence"] and flag["state"] == "raised" else ""
        lines.append(f"{name} {flag['state']}: {flag['detail']}{evidence}")
    return lines


def _plan(plan):
    lines = ["", f"## Reading plan: {plan['depth']}"]
    if plan["deep_reasons"]:
        lines.append("deep because: " + "; ".join(plan["deep_reasons"]))
    sections = ", ".join(section["anchor"] for section in plan["sections"])
    lines.append(f"plan: {plan['lines']} of {plan['catalog_lines']} catalog lines ({plan['fraction']:.0%}), "
                 f"{len(plan['sections'])} sections + {len(plan['checklist'])} checklist lines: {sections}")
    if plan["over_budget"]:
        lines.append(f"over the {plan['budget']:.0%} budget, kept as checklist lines: " + ", ".join(plan["over_budget"]))
    lines.append("print them: rerun triage_pr.py on this PR document with --expand")
    return lines


def _lenses(lenses):
    """One heading line with the expected extra cost, then per lens why it was chosen and the question it asks."""
    if not lenses["chosen"]:
        reason = (f"capped at {lenses['cap']}" if lenses["depth"] == "deep"
                  else f"{lenses['depth']} review: one pass, no lenses")
        return ["", f"## Lenses: none ({reason})"]
    output = lenses["chosen"][0]["output"].replace(lenses["chosen"][0]["id"], "<lens>")
    head = (f"## Lenses: {len(lenses['chosen'])}, expected extra cost ~{lenses['extra_cost_tokens'] // 1000}k tokens "
            f"(validator ~{lenses['validator_cost_tokens'] // 1000}k included); each starts from "
            f"{lenses['chosen'][0]['starts_from']} and writes {output}")
    if lenses["cut"]:
        head += f"; cut by the cap of {lenses['cap']}: {', '.join(lenses['cut'])}"
    lines = ["", head]
    for lens in lenses["chosen"]:
        lines += [f"{lens['id']} (~{lens['cost_tokens'] // 1000}k tokens, budget {lens['tool_call_budget']} tool calls): "
                  f"{clip('; '.join(lens['why']), 90)}", f"  asks: {lens['question']}"]
    return lines


def _checks(checks, number):
    lines = ["", "## Mechanical checks"]
    for name, check in checks.items():
        lines.append(f"{name}: {check['status']} — {check['summary']}")
        if check.get("notice"):
            lines.append(f"  NOTICE: {check['notice']}")
        # Checks list flagged items first; never hide one behind "more in --json".
        flagged = sum(1 for item in check["items"] if is_flagged(name, item))
        shown = max(CHECK_ITEMS_SHOWN, min(flagged, FLAGGED_SHOWN))
        for item in check["items"][:shown]:
            lines.append("  " + describe_check_item(name, item))
        hidden = len(check["items"]) - shown + check.get("omitted", 0)
        if hidden > 0:
            lines.append(f"  … {hidden} more in --json")
    if "context" not in checks:
        lines.append(f"context: not given — build the context pack with scripts/context_pack.py PR_JSON, "
                     f"then re-run with --context outputs/pr-{number}-context.json")
    return lines


def is_flagged(name, item):
    """Whether an item of an ``ok``-looking list still needs the reviewer ([unverified], unregistered, pack flag)."""
    if name == "perf-claims":
        return not item["traceable"]
    if name == "env-vars":
        return item["state"] in ENV_FLAGGED
    return name == "context"


def describe_check_item(name, item):
    """One line for one item of a mechanical check."""
    where = f"{item['path']}:{item['line']}" if item.get("path") and item.get("line") else item.get("path", "")
    if name == "mori-symbols":
        return f"{where} {item['symbol']}: {item['state']}"
    if name == "env-vars":
        return f"{item['name']} {item['state']} ({where}): {item['detail']}"
    if name == "magic-constants":
        return f"{where} {item['literal']} [{item['id']}]: {item['why']}"
    if name == "perf-claims":
        if item["traceable"]:
            mark = "traceable (" + ", ".join(item["evidence"]) + ")"
        else:
            mark = item["tag"] + (f" (nearby: {', '.join(item['nearby'])})" if item.get("nearby") else "")
        return f"{item['claim']} in {item['source']}: {mark} — {clip(item['text'], 70)}"
    if name == "ci":
        tags = [tag for tag, on in (("ROCm/AMD", item["rocm"]), ("infrastructure?", item["infrastructure"])) if on]
        return f"{item['name']}: {item['outcome']}" + (f" [{', '.join(tags)}]" if tags else "")
    if name == "prompt-injection":
        return f"{item['source']} [{item['id']}]: {clip(item['text'], 100)}"
    if name == "context":
        return f"{item['code']} {where}: {clip(item['message'], 240)}"
    return str(item)
