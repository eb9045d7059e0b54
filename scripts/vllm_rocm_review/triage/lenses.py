"""Choose the review lenses a deep review runs, from the PR's diff families, types and tiers.

A lens scores the lens file's ``weights`` for each family, PR type or backbone tier of the PR
that its ``selected_by`` lists. A deep review runs the lenses scoring at least ``min_score``,
best first (ties keep the file's order), cut at ``max_lenses`` or at the caller's cap, and
topped up to ``min_lenses`` with the next-best lenses, then from ``fallback``. A quick review
runs none: one pass, as without lenses.
"""

DEEP = "deep"


def select_lenses(lens_set, result, cap=None):
    """The ``lenses`` entry of a triage result: chosen lenses with why and cost, and what the cap cut."""
    limit = lens_set.max_lenses if cap is None else min(cap, lens_set.max_lenses)
    depth = result["reading_plan"]["depth"]
    if depth != DEEP:
        return _selection(depth, limit, [], [], 0)
    ranked = _ranked(lens_set, result)
    qualified = [(lens, why) for score, lens, why in ranked if score >= lens_set.min_score]
    topping = [(lens, why) for score, lens, why in ranked if score < lens_set.min_score]
    topping += [(lens_set.by_id(lens_id), [f"fallback: deep reviews run at least {lens_set.min_lenses} lenses"])
                for lens_id in lens_set.fallback if lens_id not in {lens.id for _, lens, _ in ranked}]
    picked = qualified[:limit]
    picked += topping[:max(0, min(lens_set.min_lenses, limit) - len(picked))]
    number = result["pr"]["number"]
    chosen = [_entry(lens, why, number, lens_set.text_path) for lens, why in picked]
    return _selection(depth, limit, chosen, [lens.id for lens, _ in qualified[limit:]],
                      lens_set.validator_cost_tokens if chosen else 0)


def lens_output_path(number, lens_id):
    """Where a lens pass writes its candidate findings."""
    return f"outputs/pr-{number}-lens-{lens_id}.json"


def code_map_path(number):
    """The code map every lens pass starts from (written by scripts/context_pack.py)."""
    return f"outputs/pr-{number}-code.md"


def _ranked(lens_set, result):
    """(score, lens, why) for every lens that scores, best first; ties keep the lens file's order."""
    present = {
        "families": {family["id"] for family in result["families"]},
        "pr_types": {pr_type["id"] for pr_type in result["pr_types"]},
        "tiers": {entry["tier"] for entry in result["tiers"]},
    }
    scored = []
    for position, lens in enumerate(lens_set.lenses):
        hits = {"families": sorted(lens.families & present["families"]),
                "pr_types": sorted(lens.pr_types & present["pr_types"]),
                "tiers": sorted(lens.tiers & present["tiers"])}
        score = sum(lens_set.weights[key] * len(names) for key, names in hits.items())
        why = ([f"family {name}" for name in hits["families"]] + [f"tier {tier} file" for tier in hits["tiers"]]
               + [f"type {name}" for name in hits["pr_types"]])
        if score:
            scored.append((-score, position, lens, why))
    return [(-negated, lens, why) for negated, _, lens, why in sorted(scored, key=lambda item: item[:2])]


def _selection(depth, cap, chosen, cut, validator_cost):
    return {"depth": depth, "cap": cap, "chosen": chosen, "cut": cut, "validator_cost_tokens": validator_cost,
            "extra_cost_tokens": sum(entry["cost_tokens"] for entry in chosen) + validator_cost}


def _entry(lens, why, number, text_path):
    return {"id": lens.id, "question": lens.question, "why": why, "text": f"{text_path}#{lens.anchor}",
            "output": lens_output_path(number, lens.id), "starts_from": code_map_path(number),
            "tool_call_budget": lens.tool_call_budget, "owns": list(lens.owns), "read_first": list(lens.read_first),
            "cost_tokens": lens.cost_tokens}
