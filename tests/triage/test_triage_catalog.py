"""The catalog parser, the triage sections of the surface file, and the literal pre-filter."""

import re

import pytest

from conftest import ROOT
from triage_support import CATALOG, CONFIG
from vllm_rocm_review.core.catalog import load_catalog, parse_catalog, rule_anchor
from vllm_rocm_review.triage.literal_filter import FilteredPattern, required_literals
from vllm_rocm_review.core.surface import load_surface
from vllm_rocm_review.triage.config import DETECTORS, TriageConfig, TriageConfigError, validate_triage_sections

SAMPLE = """# Title
intro
<a id="core-discipline"></a>
## Core discipline
line a
<a id="cat-a"></a>
## A · Coverage
<a id="rule-a1"></a>
### A1 · key — Title one
- body 1
<a id="rule-a2"></a>
### A2 · key — Title two
- body 2
<a id="not-a-section"></a>
plain text after an anchor without a heading
<a id="cat-b"></a>
## B · Bypass
"""


# --- catalog -----------------------------------------------------------------------


def test_sections_run_to_the_next_anchor_of_the_same_or_higher_level():
    catalog = parse_catalog(SAMPLE)
    assert catalog.anchors() == ["core-discipline", "cat-a", "rule-a1", "rule-a2", "cat-b"]
    assert catalog.cut("rule-a1") == '<a id="rule-a1"></a>\n### A1 · key — Title one\n- body 1\n'
    assert catalog.cut("rule-a2").endswith("plain text after an anchor without a heading\n")
    assert catalog.section("cat-a").line_count == 10
    assert catalog.cut("missing") is None


def test_covered_lines_count_nested_sections_once():
    catalog = parse_catalog(SAMPLE)
    assert catalog.covered_lines(["cat-a", "rule-a1"]) == catalog.section("cat-a").line_count
    assert catalog.covered_lines(["rule-a1", "rule-a2"]) == 3 + 5
    assert catalog.rule_ids() == ["A1", "A2"]
    assert rule_anchor("D1b") == "rule-d1b"


def test_missing_or_anchorless_catalog_is_an_error(tmp_path):
    from vllm_rocm_review.core.catalog import CatalogError

    with pytest.raises(CatalogError, match="not found"):
        load_catalog(tmp_path / "none.md")
    plain = tmp_path / "plain.md"
    plain.write_text("# nothing to cut\n", encoding="utf-8")
    with pytest.raises(CatalogError, match="no <a id"):
        load_catalog(plain)


def test_every_rule_triage_can_derive_has_a_body_in_the_bundled_catalog():
    derivable = {rule for family in CONFIG.families for rule in family.rules}
    derivable |= {rule for pr_type in CONFIG.pr_types for rule in pr_type.rules}
    derivable |= {rule for rule, _ in CONFIG.judgment_rules}
    missing = sorted(rule for rule in derivable if CATALOG.section(rule_anchor(rule)) is None)
    assert missing == []
    reading = CONFIG.checks["reading_plan"]
    anchors = [*reading["always"], *reading["deep"], *(a for group in reading["with_rule"].values() for a in group)]
    for anchor in anchors:
        assert CATALOG.section(anchor) is not None, anchor


# --- triage sections of rocm-surface.yaml ------------------------------------------


def test_bundled_triage_sections_are_valid():
    data = load_surface(ROOT / "references" / "rocm-surface.yaml")
    assert validate_triage_sections(data) == []
    assert {family["detector"] for family in data["diff_families"] if "detector" in family} <= set(DETECTORS)


@pytest.mark.parametrize("family, problem", [
    ({"id": "x", "why": "w", "rules": ["Z9"], "added": ["a"]}, "not a rule ID"),
    ({"id": "x", "why": "w", "rules": ["B3"]}, "needs a trigger"),
    ({"id": "x", "why": "w", "rules": ["B3"], "added": ["("]}, "bad regex"),
    ({"id": "x", "why": "w", "rules": ["B3"], "detector": "telepathy"}, "unknown detector"),
    ({"id": "x", "why": "w", "rules": ["B3"], "added": ["a"], "colour": "red"}, "unknown keys"),
    ({"why": "w", "rules": ["B3"], "added": ["a"]}, "id is required"),
])
def test_malformed_families_are_rejected(family, problem):
    data = load_surface(ROOT / "references" / "rocm-surface.yaml")
    data["diff_families"] = [family]
    problems = validate_triage_sections(data)
    assert any(problem in text for text in problems), problems
    with pytest.raises(TriageConfigError):
        TriageConfig(data)


def test_incomplete_checks_section_is_rejected():
    data = load_surface(ROOT / "references" / "rocm-surface.yaml")
    del data["checks"]["perf_claims"]
    assert any("checks lacks perf_claims" in text for text in validate_triage_sections(data))


# --- literal pre-filter ---------------------------------------------------------------


@pytest.mark.parametrize("pattern, flags, expected", [
    (r"\btl\.(load|store)\(", 0, {"load", "store"}),
    (r"torch\.(cuda|hip)\.synchronize\(", 0, {".synchronize("}),
    (r"(?<![\w.])(224|240|448)(\.0*)?(?![\w.])", 0, {"224", "240", "448"}),
    (r"^\s*assert\b", re.MULTILINE, {"assert"}),
    (r"ROCm", re.IGNORECASE, {"rocm"}),
    (r"(?-i:hip[A-Z])", re.IGNORECASE, {"hip"}),
    (r"\w+_x?", 0, None),
    (r"a|bc", 0, None),
    (r"(?i:abc)def", 0, {"def"}),
    # Equal length in characters: the CJK words win (longer in bytes, far rarer in code than "ai").
    (r"(?:致|给)\s*(?:AI|LLM)\s*(?:审查|评审)", re.IGNORECASE, {"审查", "评审"}),
])
def test_required_literals(pattern, flags, expected):
    result = required_literals(pattern, flags)
    assert (set(result) if result else None) == expected


def _surface_patterns():
    patterns = [marker.regex for marker in CONFIG.text_markers + CONFIG.path_markers]
    patterns += [guard.regex for guard in CONFIG.guards]
    for family in CONFIG.families:
        patterns += [*family.added, *family.removed, *family.changed, *family.text, *family.with_in_file,
                     *family.unless_in_file]
        patterns += [p for p in (family.any_added, family.any_removed) if p is not None]
    checks = CONFIG.checks
    patterns += [p.regex for p in checks["magic_constants"]["patterns"] + checks["prompt_injection"]]
    patterns += [checks["magic_constants"]["any"], checks["prompt_injection_any"], *checks["env_vars"]["reads"]]
    return [p for p in patterns if isinstance(p, FilteredPattern)]


def test_prefilter_never_hides_a_match_on_real_diff_lines():
    from vllm_cases import case_ids, load_case

    numbers = case_ids()
    if not numbers:
        pytest.skip("../shared/vllm-cases is absent")
    lines = set()
    for number in numbers:
        _, diff, message = load_case(number)
        lines.update(line[1:] for line in diff.splitlines() if line[:1] in "+-")
        lines.update(message.splitlines())
    patterns = _surface_patterns()
    assert len(patterns) > 150
    hidden = [(p.pattern, line) for p in patterns for line in lines if p.regex.search(line) and not p.could_match(line)]
    assert hidden == []
