"""The updater's pure parts: path verdicts, the curation changelog, git SHAs, surface paths."""

import pytest
from conftest import ROOT
from conftest import shared_path

from vllm_rocm_review.upstream.curation import changed_since_curation
from vllm_rocm_review.upstream.curation import curation_line
from vllm_rocm_review.upstream.curation import read_curated_shas
from vllm_rocm_review.core.surface import load_surface
from vllm_rocm_review.upstream.tree_check import PathVerdict
from vllm_rocm_review.upstream.tree_check import TreeCheckReport
from vllm_rocm_review.upstream.tree_check import check_paths
from vllm_rocm_review.upstream.tree_check import surface_path_checks
from vllm_rocm_review.upstream.sources import git_blob_sha

TREE = [
    "vllm/platforms/rocm.py",
    "vllm/v1/attention/backends/rocm_attn.py",
    "vllm/v1/attention/backends/mla/rocm_aiter_mla.py",
    "vllm/attention/ops/rocm_aiter_mla.py",
    "vllm/model_executor/layers/fused_moe/configs/E=8,N=1792,device_name=AMD_Instinct_MI300X.json",
    "csrc/rocm/attention.cu",
]


def verdict_lines(checks, tree=TREE):
    return [verdict.line() for verdict in check_paths(tree, checks)]


def test_present_file_folder_and_glob_are_ok():
    checks = [("vllm/platforms/rocm.py", False), ("vllm/v1/attention/backends", False),
              ("vllm/model_executor/layers/fused_moe/configs/*AMD_Instinct*.json", False)]
    assert verdict_lines(checks) == [f"OK {path}" for path, _ in checks]


def test_same_name_elsewhere_is_moved_to_the_closest_candidate():
    assert verdict_lines([("vllm/v1/attention/backends/rocm_aiter_mla.py", False)]) == [
        "MOVED vllm/v1/attention/backends/rocm_aiter_mla.py -> vllm/v1/attention/backends/mla/rocm_aiter_mla.py"
        " (+1 other candidate)"
    ]


def test_longest_shared_suffix_wins_over_shared_prefix():
    tree = ["vllm/a/b/ops/kernel.py", "vllm/x/attention/ops/kernel.py"]
    assert verdict_lines([("vllm/attention/ops/kernel.py", False)], tree) == [
        "MOVED vllm/attention/ops/kernel.py -> vllm/x/attention/ops/kernel.py (+1 other candidate)"
    ]


def test_unknown_name_is_missing_and_unmatched_glob_is_missing():
    assert verdict_lines([("vllm/gone.py", False), ("csrc/*.hip", False)]) == ["MISSING vllm/gone.py", "MISSING csrc/*.hip"]


def test_glob_whose_folder_moved_points_at_the_new_folder():
    tree = ["vllm/quant/configs/device_name=AMD_Instinct_MI300X.json"]
    assert verdict_lines([("vllm/moe/configs/*AMD_Instinct*.json", False)], tree) == [
        "MOVED vllm/moe/configs/*AMD_Instinct*.json -> vllm/quant/configs/device_name=AMD_Instinct_MI300X.json"
    ]


def test_old_locations_are_expected_absent_and_flagged_when_back():
    checks = [("vllm/attention/backends/rocm_flash_attn.py", True), ("vllm/platforms/rocm.py", True), ("csrc", False)]
    assert verdict_lines(checks) == [
        "REAPPEARED vllm/platforms/rocm.py", "OK csrc", "OLD-ABSENT vllm/attention/backends/rocm_flash_attn.py"
    ]


def test_drift_comes_first_then_ok_then_old_locations_each_in_yaml_order():
    checks = [
        ("csrc", False),
        ("vllm/gone.py", False),
        ("vllm/attention/backends/rocm_flash_attn.py", True),
        ("vllm/platforms/rocm.py", False),
        ("vllm/v1/attention/backends/rocm_aiter_mla.py", False),
        ("csrc/rocm/attention.cu", True),
        ("vllm/also_gone.py", False),
    ]
    assert verdict_lines(checks) == [
        "MOVED vllm/v1/attention/backends/rocm_aiter_mla.py -> vllm/v1/attention/backends/mla/rocm_aiter_mla.py"
        " (+1 other candidate)",
        "MISSING vllm/gone.py",
        "MISSING vllm/also_gone.py",
        "REAPPEARED csrc/rocm/attention.cu",
        "OK csrc",
        "OK vllm/platforms/rocm.py",
        "OLD-ABSENT vllm/attention/backends/rocm_flash_attn.py",
    ]


def _report(statuses, tree_source="downloaded"):
    verdicts = [PathVerdict(f"p{index}", status) for index, status in enumerate(statuses)]
    return TreeCheckReport("vllm-project/vllm", "main", "6adad08767583f52", "0688a958aa", tree_source, True, verdicts)


def test_summary_counts_ok_and_drift_even_when_zero():
    report = _report(["OK", "OK", "OLD-ABSENT"])
    assert report.summary() == "vllm tree @6adad087: 2 OK, 0 MOVED, 0 MISSING; 1 old locations absent (downloaded)"
    assert not report.drifted


def test_summary_names_reappeared_old_locations_only_when_there_are_some():
    report = _report(["MISSING", "OK", "MOVED", "REAPPEARED", "OLD-ABSENT", "OLD-ABSENT"], "saved copy")
    assert report.summary() == (
        "vllm tree @6adad087: 1 OK, 1 MOVED, 1 MISSING; 2 old locations absent, 1 REAPPEARED (saved copy)"
    )
    assert report.drifted


def test_surface_paths_cover_every_section_once_in_order():
    surface = {
        "known_paths": [{"path": "vllm/platforms/rocm.py"}, {"path": "vllm/old.py", "old": True, "moved_to": "vllm/new.py"}],
        "shared_surface": [{"path": "vllm/envs.py"}, {"path": "csrc/rocm/*.cu"}],
        "backbone_tiers": [{"tier": 1, "path": "vllm/platforms/rocm.py"}, {"tier": 2, "path": "vllm/new.py"}],
        "tuning_configs": {"globs": ["vllm/**/configs/*.json"]},
    }
    assert surface_path_checks(surface) == [
        ("vllm/platforms/rocm.py", False), ("vllm/old.py", True), ("vllm/new.py", False),
        ("vllm/envs.py", False), ("csrc/rocm/*.cu", False), ("vllm/**/configs/*.json", False),
    ]


def test_blob_sha_matches_git_for_the_shared_copy():
    data = shared_path("upstream", "atom-review-pr-skill.md").read_bytes()
    assert git_blob_sha(data) == "728c3a3fa18e713c5b67fc4a5ff467d176282f75"


CATALOG = """# Rules

<a id="changelog"></a>
## 更新日志

| Date | Sources | Change |
|---|---|---|
| 2026-08-01 | atom-review-pr-skill@43f61050 | draft |
| 2026-08-23 | `atom-review-pr-skill@728c3a3f`, mori-readme@2ab492a7 | distilled |

<a id="after"></a>
## After

| Date | Sources | Change |
|---|---|---|
| 2027-01-01 | atom-review-pr-skill@00000000 | not the changelog |
"""


def test_curated_shas_come_from_the_last_changelog_row(tmp_path):
    catalog = tmp_path / "rules.md"
    catalog.write_text(CATALOG, encoding="utf-8")
    assert read_curated_shas(catalog) == {"atom-review-pr-skill": "728c3a3f", "mori-readme": "2ab492a7"}


def test_catalog_without_changelog_rows_gives_none(tmp_path):
    catalog = tmp_path / "rules.md"
    catalog.write_text('<a id="changelog"></a>\n## 更新日志\n\n| Date | Sources | Change |\n|---|---|---|\n', encoding="utf-8")
    assert read_curated_shas(catalog) is None
    assert read_curated_shas(tmp_path / "absent.md") is None


def test_changed_since_curation_names_moved_new_and_gone_sources():
    curated = {"atom": "728c3a3f", "mori": "2ab492a7"}
    current = {"atom": "728c3a3fa18e", "aiter": "3fdb11af"}
    assert changed_since_curation(curated, current) == ["aiter", "mori"]
    line = curation_line(curated, current, "rules.md")
    assert line == "curated at: atom@728c3a3f, mori@2ab492a7; upstream now: aiter@3fdb11af, atom@728c3a3f; changed since curation: aiter, mori"
    assert curation_line(None, current, "rules.md").startswith("curated at: unknown (no changelog row in rules.md)")


def test_bundled_catalog_changelog_names_upstream_sources():
    catalog = ROOT / "references" / "vllm-rocm-review-rules.md"
    if not catalog.is_file():
        pytest.skip("the rule catalog is not written yet")
    curated = read_curated_shas(catalog)
    assert curated, "the last 更新日志 row names no name@sha8 token"
    assert set(curated) <= {source["name"] for source in load_surface()["upstream_sources"]}
