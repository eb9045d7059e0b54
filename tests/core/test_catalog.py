"""The rule catalog: anchors triage can cut, rule bodies in the fixed shape, agreement with the YAML, and provenance."""

import re
import statistics

import pytest

from conftest import ROOT, shared_path
from vllm_tree import vllm_main_paths

from vllm_rocm_review.core.catalog import parse_catalog, rule_anchor, table_rows
from vllm_rocm_review.core.surface import glob_matches, is_glob, load_surface

CATALOG_PATH = ROOT / "references" / "vllm-rocm-review-rules.md"

FIXED_ANCHORS = [
    "toc", "core-discipline",
    "cat-a", "cat-b", "cat-c", "cat-d", "cat-e", "cat-f", "cat-g", "cat-p", "cat-v", "cat-hk",
    "backbone-tiers", "ai-diagnostic", "mori-appendix", "changelog",
]
RULE_IDS = [
    "A1", "A2",
    "B1", "B2", "B3", "B4", "B5", "B6", "B7",
    "C1", "C2", "C3", "C4", "C5",
    "D1", "D1b", "D2", "D4", "D5", "D6", "D7", "D8", "D9", "D10", "D11", "D12",
    "E1", "E2", "E3", "E4", "E5", "E6",
    "F1", "F2", "G1", "G1b",
    "P1", "P2", "P3", "P4", "P5", "P6", "P7",
    "V1", "V2", "V3", "V4", "V5", "V6", "V7",
    "HK",
]
RULE_BULLETS = ["- **Severity**: ", "- **Trigger**: ", "- **Check**: ", "- **False positive?**: ", "- **Ask for**: "]
VLLM_PATH_PREFIXES = ("vllm/", "csrc/", "docker/", "requirements/", ".buildkite/", "tests/", "examples/")
SHARED_SENTENCE_CHARS = 90


@pytest.fixture(scope="module")
def catalog_text():
    return CATALOG_PATH.read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def catalog(catalog_text):
    return parse_catalog(catalog_text, CATALOG_PATH)


@pytest.fixture(scope="module")
def surface():
    return load_surface()


def category_anchor(rule_id):
    return "cat-hk" if rule_id == "HK" else f"cat-{rule_id[0].lower()}"


def section_lines(catalog, anchor):
    lines = catalog.section_lines(anchor)
    assert lines is not None, f"no section {anchor!r}"
    return lines


def mapped_rule_ids(surface):
    """Rule IDs the YAML points at, by where they are mapped."""
    mapped = {
        "pr_types": {rule for pr_type in surface["pr_types"] for rule in pr_type.get("rules", [])},
        "judgment_rules": {entry["id"] for entry in surface["judgment_rules"]},
        "diff_families": {rule for family in surface["diff_families"] for rule in family.get("rules", [])},
    }
    return mapped


# --- anchors, headings, table of contents ------------------------------------------------------


@pytest.mark.parametrize("anchor", FIXED_ANCHORS)
def test_fixed_anchor_appears_once_followed_by_a_heading(catalog_text, catalog, anchor):
    assert catalog_text.count(f'<a id="{anchor}"></a>') == 1
    section = catalog.section(anchor)
    assert section is not None, f"anchor {anchor!r} is not directly followed by a heading"
    assert section.level == 2


def test_fixed_sections_appear_in_contract_order(catalog):
    positions = [catalog.section(anchor).start for anchor in FIXED_ANCHORS]
    assert positions == sorted(positions)


def test_every_anchor_is_unique(catalog):
    anchors = catalog.anchors()
    duplicates = sorted({anchor for anchor in anchors if anchors.count(anchor) > 1})
    assert duplicates == []


def test_rule_set_is_exactly_the_fixed_list(catalog):
    assert sorted(catalog.rule_ids()) == sorted(rule_id.upper() for rule_id in RULE_IDS)


@pytest.mark.parametrize("rule_id", RULE_IDS)
def test_rule_has_heading_and_the_five_bullets(catalog, rule_id):
    lines = section_lines(catalog, rule_anchor(rule_id))
    heading = re.fullmatch(r"### (\S+) · ([a-z0-9]+(?:-[a-z0-9]+)*) — (\S.*)", lines[1])
    assert heading, f"bad rule heading: {lines[1]!r}"
    assert heading.group(1) == rule_id
    bullets = []
    for line in lines[2:]:
        if not line.strip():
            continue
        if line.startswith("- "):
            bullets.append(line)
        else:
            assert line.startswith("  "), f"{rule_id}: stray line {line!r} (continuations are indented two spaces)"
    assert len(bullets) == len(RULE_BULLETS), f"{rule_id}: expected five bullets, got {len(bullets)}"
    for bullet, prefix in zip(bullets, RULE_BULLETS):
        assert bullet.startswith(prefix), f"{rule_id}: {bullet[:40]!r} should start with {prefix!r}"
        assert bullet[len(prefix):].strip(" .…"), f"{rule_id}: empty {prefix.strip()}"
    assert any(mark in bullets[0] for mark in ("🔴", "⚠️", "📝")), f"{rule_id}: severity names no 🔴/⚠️/📝"


def test_concept_keys_are_unique(catalog):
    keys = [catalog.section(rule_anchor(rule_id)).title.split(" · ")[1].split(" — ")[0] for rule_id in RULE_IDS]
    assert len(keys) == len(set(keys))


@pytest.mark.parametrize("rule_id", RULE_IDS)
def test_rule_sits_in_its_category(catalog, rule_id):
    rule = catalog.section(rule_anchor(rule_id))
    category = catalog.section(category_anchor(rule_id))
    assert rule.level == 3
    assert category.start < rule.start < category.end


def test_toc_links_every_anchor(catalog):
    toc = "\n".join(section_lines(catalog, "toc"))
    linked = set(re.findall(r"\]\(#([^)]+)\)", toc))
    missing = [anchor for anchor in catalog.anchors() if anchor != "toc" and anchor not in linked]
    assert missing == []
    dangling = sorted(linked - set(catalog.anchors()))
    assert dangling == []


def test_preamble_says_rule_ids_stay_out_of_reports(catalog):
    preamble = "\n".join(catalog.lines[: catalog.section("toc").start])
    assert "Rule IDs are internal" in preamble
    assert "never appear in a report" in preamble


def test_catalog_names_no_machine_paths(catalog_text):
    assert re.search(r"/(work|root|home|Users|tmp)/", catalog_text) is None


# --- reading budget --------------------------------------------------------------------------------


def test_core_discipline_stays_compact(catalog):
    assert catalog.section("core-discipline").line_count <= 60


def test_core_discipline_states_performance_severity_and_verified_facts(catalog):
    """The two statements that keep a verified mechanism from being downgraded, each pointing at real rules."""
    text = "\n".join(section_lines(catalog, "core-discipline"))
    severity = re.search(r"\*\*Performance severity\.\*\*(.*?)\n\n", text, re.S)
    facts = re.search(r"\*\*Verified platform facts\.\*\*(.*?)\n\n", text, re.S)
    assert severity and "🔴" in severity.group(1) and "default path" in severity.group(1)
    assert facts and "[已验证]" in facts.group(1) and "hipErrorStreamCaptureUnsupported" in facts.group(1)
    cited = set(re.findall(r"\b([A-Z]\d+b?)\b(?=[,)])", severity.group(1) + facts.group(1)))
    assert cited and cited <= set(catalog.rule_ids()), sorted(cited - set(catalog.rule_ids()))


def test_rule_bodies_stay_cuttable(catalog):
    sizes = {rule_id: catalog.section(rule_anchor(rule_id)).line_count for rule_id in RULE_IDS}
    oversized = {rule_id: size for rule_id, size in sizes.items() if not 7 <= size <= 15}
    assert oversized == {}
    assert statistics.median(sizes.values()) <= 13
    assert 600 <= catalog.line_count <= 1000


# --- agreement with references/rocm-surface.yaml ----------------------------------------------------


def test_every_mapped_rule_has_a_body(catalog, surface):
    bodies = set(catalog.rule_ids())
    for where, rule_ids in mapped_rule_ids(surface).items():
        unknown = sorted(rule_id for rule_id in rule_ids if rule_id.upper() not in bodies)
        assert unknown == [], f"{where} maps rule IDs with no body in the catalog: {unknown}"


def test_every_rule_body_is_reachable_from_the_yaml(catalog, surface):
    assert surface["pr_types"], "rocm-surface.yaml has no pr_types yet: the catalog's rules are unreachable"
    reachable = {rule_id.upper() for rule_ids in mapped_rule_ids(surface).values() for rule_id in rule_ids}
    unreachable = [rule_id for rule_id in catalog.rule_ids() if rule_id not in reachable]
    assert unreachable == [], f"no pr_type, diff_family or judgment_rules entry reaches {unreachable}"


def test_tier_table_equals_yaml_backbone_tiers(catalog, surface):
    lines = section_lines(catalog, "backbone-tiers")
    headers = [line for line in lines if line.strip().startswith("| Tier |")]
    assert [h.replace(" ", "") for h in headers] == ["|Tier|Path|Why|"]
    rows = table_rows(lines)[1:]
    table = []
    for tier, path, why in rows:
        assert tier in {"1", "2", "3"}, f"tier {tier!r}"
        assert re.fullmatch(r"`[^`]+`", path), f"path cell {path!r} must be one backticked path"
        assert why, f"empty Why for {path}"
        table.append((int(tier), path.strip("`")))
    assert len(table) == len(set(table)), "repeated tier rows"
    yaml_tiers = {(entry["tier"], entry["path"]) for entry in surface["backbone_tiers"]}
    assert yaml_tiers, "rocm-surface.yaml has no backbone_tiers yet"
    assert set(table) == yaml_tiers


MORI_NAME = re.compile(
    r"(?:mori\.[\w.]+|Ep[A-Z]\w+|IOEngine\w*|\w+BackendConfig|BackendType|shmem_\w+|\w+_standard_moe|convert_\w+_(?:output|input)"
    r"|IntraNode\w*|InterNode\w*|AsyncLL|dispatch_combine_v2)"
)


def test_mori_appendix_names_only_known_mori_api(catalog, surface):
    known = set()
    for module, names in surface["mori_api"].items():
        known.add(module)
        for name in names:
            known.update({name, name.split(".")[-1], f"{module}.{name}"})
    appendix = "\n".join(section_lines(catalog, "mori-appendix"))
    named = {span.split("(")[0] for span in re.findall(r"`([^`\s]+)`", appendix)}
    mori_names = sorted(name for name in named if MORI_NAME.fullmatch(name))
    assert len(mori_names) >= 10
    unknown = [name for name in mori_names if name not in known]
    assert unknown == [], f"mori appendix names symbols missing from mori_api: {unknown}"


# --- changelog -------------------------------------------------------------------------------------------


def changelog_rows(catalog):
    return table_rows(section_lines(catalog, "changelog"))


def test_changelog_header_and_dates(catalog):
    rows = changelog_rows(catalog)
    assert rows[0] == ["Date", "Sources", "Change"]
    dates = [row[0] for row in rows[1:]]
    assert dates, "changelog has no rows"
    assert all(re.fullmatch(r"\d{4}-\d{2}-\d{2}", date) for date in dates)
    assert dates == sorted(dates)


def test_changelog_last_row_names_upstream_sources(catalog, surface):
    sources_cell = changelog_rows(catalog)[-1][1]
    tokens = sources_cell.split(", ")
    parsed = [re.fullmatch(r"([A-Za-z0-9][A-Za-z0-9._-]*)@([0-9a-f]{8})", token) for token in tokens]
    assert all(parsed), f"Sources cell must be name@sha8 tokens separated by ', ': {sources_cell!r}"
    names = [match.group(1) for match in parsed]
    known = {source["name"] for source in surface["upstream_sources"]}
    assert set(names) <= known, f"unknown source names {sorted(set(names) - known)}"
    required = {source["name"] for source in surface["upstream_sources"] if not source["optional"]}
    assert required <= set(names), f"last row lacks required sources {sorted(required - set(names))}"
    assert len(names) == len(set(names))


def test_first_changelog_row_matches_the_distilled_copies(catalog):
    sources_md = shared_path("upstream", "SOURCES.md").read_text(encoding="utf-8")
    for token in changelog_rows(catalog)[1][1].split(", "):
        sha = token.split("@")[1]
        assert re.search(rf"`{sha}[0-9a-f]*`", sources_md), f"{token} is not a SHA listed in upstream/SOURCES.md"


# --- distilled, not copied -----------------------------------------------------------------------------


def normalized(text):
    """Lower-case text without markdown punctuation and with single spaces, so reflowing or re-styling hides nothing."""
    text = re.sub(r"[`*_>|#]", " ", text)
    return re.sub(r"\s+", " ", text).strip().lower()


def test_no_long_sentence_shared_with_upstream(catalog_text):
    """A sentence of 90+ characters shared with an upstream copy would share a 90-character run; look for any such run."""
    upstream_files = sorted(shared_path("upstream").glob("*.md"))
    assert upstream_files
    ours = normalized(catalog_text)
    for upstream_file in upstream_files:
        theirs = normalized(upstream_file.read_text(encoding="utf-8"))
        runs = {theirs[i:i + SHARED_SENTENCE_CHARS] for i in range(len(theirs) - SHARED_SENTENCE_CHARS + 1)}
        shared = next((ours[i:i + SHARED_SENTENCE_CHARS] for i in range(len(ours) - SHARED_SENTENCE_CHARS + 1)
                       if ours[i:i + SHARED_SENTENCE_CHARS] in runs), None)
        assert shared is None, f"catalog repeats {upstream_file.name}: {shared!r}"


# --- every vLLM path written in the catalog exists in vLLM main ------------------------------------------


@pytest.fixture(scope="module")
def vllm_paths():
    return set(vllm_main_paths())


def catalog_repo_paths(catalog_text):
    spans = re.findall(r"`([^`\s]+)`", catalog_text)
    return sorted({span.rstrip("/") for span in spans if span.startswith(VLLM_PATH_PREFIXES)})


def test_catalog_names_vllm_paths(catalog_text):
    assert len(catalog_repo_paths(catalog_text)) >= 40


def test_every_backticked_vllm_path_exists(catalog_text, vllm_paths):
    missing = [path for path in catalog_repo_paths(catalog_text)
               if not (glob_matches(path, vllm_paths) if is_glob(path) else path in vllm_paths)]
    assert missing == [], f"not in vLLM main: {missing}"
