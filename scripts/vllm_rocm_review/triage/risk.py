"""Backbone tiers per file and the Q1-Q3 heuristic flags (seed step 5).

Each flag is ``raised``, ``clear``, ``unknown`` (CI state not fetched) or
``not-applicable``, with the evidence behind it; a raised flag is a question the
report must answer.
"""

from ..github.ci_checks import FAILED_OUTCOMES


def file_tiers(config, diffs):
    """Tier of every changed file that has one; stale-branch paths map to their new home."""
    tiers = []
    for diff in diffs:
        for candidate in _candidates(config, diff):
            tier = _tier_of(config, candidate)
            if tier:
                entry = {"path": diff.path, "tier": tier[0], "why": tier[1]}
                if candidate != diff.path:
                    entry["as"] = candidate
                tiers.append(entry)
                break
    return sorted(tiers, key=lambda entry: (entry["tier"], entry["path"]))


def _candidates(config, diff):
    paths = [diff.path] + ([diff.old_path] if diff.old_path else [])
    moved = [config.moved_location(path) for path in paths]
    return paths + [path for path in moved if path]


def _tier_of(config, path):
    for fact in config.backbone_tiers.matching(path):
        if config.is_tuning_config(path) and not config.is_amd_tuning_config(path):
            continue  # a tuning folder is structural only for AMD device files
        return fact.tier, fact.why
    return None


def flags(config, tiers, families, shared_files, ci_summary):
    """Q1 Tier-1 without ROCm CI evidence; Q2 dispatch gate changed; Q3 shared helper changed."""
    tier1 = [entry["path"] for entry in tiers if entry["tier"] == 1]
    if not tier1:
        q1 = {"state": "not-applicable", "detail": "no Tier-1 file touched", "evidence": []}
    elif ci_summary is None:
        q1 = {"state": "unknown", "detail": "Tier-1 touched; CI state not in the PR document (fetch with --include-ci)",
              "evidence": tier1}
    else:
        passed = [check["name"] for check in ci_summary["rocm_checks"] if check["outcome"] == "success"]
        failed = [check["name"] for check in ci_summary["rocm_checks"] if check["outcome"] in FAILED_OUTCOMES]
        if passed and not failed:
            q1 = {"state": "clear", "detail": f"ROCm/AMD checks passed: {', '.join(passed[:3])}", "evidence": tier1}
        elif failed:
            q1 = {"state": "raised", "detail": f"Tier-1 touched and ROCm/AMD checks failed: {', '.join(failed[:3])}",
                  "evidence": tier1}
        else:
            q1 = {"state": "raised", "detail": "Tier-1 touched and no passing ROCm/AMD check in CI", "evidence": tier1}

    dispatch_ids = set(config.checks["flags"]["dispatch_families"])
    dispatch = [family for family in families if family["id"] in dispatch_ids]
    if dispatch:
        evidence = list(dict.fromkeys(_where(item) for family in dispatch for item in family["evidence"]))[:5]
        q2 = {"state": "raised", "detail": "dispatch gate changed: " + ", ".join(family["id"] for family in dispatch),
              "evidence": evidence}
    else:
        q2 = {"state": "clear", "detail": "no dispatch-gate change found in the diff", "evidence": []}

    if shared_files:
        q3 = {"state": "raised", "detail": f"{len(shared_files)} shared file(s) ROCm and CUDA both run",
              "evidence": [entry["path"] for entry in shared_files]}
    else:
        q3 = {"state": "clear", "detail": "no shared file changed", "evidence": []}
    return {"Q1": q1, "Q2": q2, "Q3": q3}


def _where(item):
    if item.get("path") and item.get("line"):
        return f"{item['path']}:{item['line']}"
    return item.get("path") or item.get("text", "")
