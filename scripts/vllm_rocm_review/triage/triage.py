"""Triage one PR document: gate, rules, tiers, flags, reading plan and mechanical checks.

Deterministic over its inputs (the PR document, the compiled surface facts, the parsed
catalog, and the mori snapshot file, by default references/upstream/mori-structure.json):
no network, no clock, so the same inputs always give the same result, which is what the
golden tests pin.
"""

from . import families as family_rules
from . import mechanical
from . import reading_plan as reading
from . import relevance as gate
from . import risk
from .context_flags import context_check
from .lenses import select_lenses
from ..core.lenses import bundle_lenses
from ..core.diff_parse import diff_from_document


def triage(document, config, catalog, snapshot_path=None, lenses=None, lens_cap=None, context_pack=None):
    """The full triage result for a validated PR document (key order is part of the output contract).

    ``lenses`` is the lens set (default: the bundle's); ``lens_cap`` caps how many a deep review runs.
    ``context_pack`` (from scripts/context_pack.py) adds the check ``context`` with its flags.
    """
    pr = document["pr"]
    diffs = diff_from_document(document)
    verdict, rocm_files, shared_files = gate.gate(config, pr, diffs)
    level = verdict["level"]
    context = family_rules.build_context(config, pr, diffs, level, rocm_files, shared_files)
    pr_types = family_rules.match_pr_types(config, context, level)
    fired = family_rules.derive_families(config, context, level)
    rules, judgment, skipped = family_rules.collect_rules(config, pr_types, fired, level)
    tiers = risk.file_tiers(config, diffs)
    checks, ci_summary = mechanical.run_checks(config, document, diffs, context.scope_diffs, snapshot_path)
    if context_pack is not None:
        checks["context"] = context_check(context_pack)
    flags = risk.flags(config, tiers, fired, shared_files, ci_summary)
    plan = reading.plan(config, catalog, level, rules, judgment, tiers, pr_types, fired, checks["perf-claims"],
                        touched_paths=[diff.path for diff in diffs],
                        scope_paths=[diff.path for diff in context.scope_diffs],
                        lines=reading.product_lines(config, context.scope_diffs, document.get("files")))
    result = {
        "pr": {"number": pr["number"], "title": pr["title"], "files": len(diffs),
               "additions": pr.get("additions"), "deletions": pr.get("deletions"),
               "diff_source": (document.get("meta") or {}).get("diff_source"),
               "files_without_patch": _unseen_changes(document, diffs)},
        "relevance": level,
        "relevance_evidence": {"reason": verdict["reason"], **verdict["evidence"]},
        "rocm_files": rocm_files,
        "shared_files": shared_files,
        "pr_types": pr_types,
        "families": fired,
        "rules": rules,
        "judgment_rules": judgment,
        "skipped_rules": skipped,
        "tiers": tiers,
        "flags": flags,
        "reading_plan": plan,
        "checks": checks,
    }
    result["lenses"] = select_lenses(lenses if lenses is not None else bundle_lenses(), result, lens_cap)
    return result


def _unseen_changes(document, diffs):
    """Changed files the diff shows no hunk for; empty files (0 lines added or removed) have nothing to show."""
    counts = {entry.get("filename"): (entry.get("additions"), entry.get("deletions"))
              for entry in document.get("files") or []}
    return [diff.path for diff in diffs if not diff.has_hunks and counts.get(diff.path) != (0, 0)]
