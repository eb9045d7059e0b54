"""The deterministic half of a review: gate, families, rules, tiers, mechanical checks, digest."""
