"""The review lenses: the YAML and the texts agree, and every name they use exists."""

import pytest
import yaml

from conftest import ROOT
from triage_support import CATALOG, CONFIG

from vllm_rocm_review.core.lenses import LensError, cross_check, load_lenses

LENSES_YAML = ROOT / "references" / "review-lenses.yaml"
LENSES_TEXT = ROOT / "references" / "review-lenses.md"


@pytest.fixture(scope="module")
def lens_set():
    return load_lenses(LENSES_YAML, LENSES_TEXT)


def test_the_bundle_has_four_to_six_lenses(lens_set):
    assert 4 <= len(lens_set.lenses) <= 6
    assert [lens.id for lens in lens_set.lenses] == [
        "dispatch-and-defaults", "kernel-contracts", "memory-graphs-streams", "host-overhead-and-hot-path",
        "model-and-checkpoint-formats", "tests-and-ci"]


def test_every_lens_has_the_default_tool_call_budget_unless_it_sets_one(tmp_path, lens_set):
    assert lens_set.tool_call_budget == 30
    assert {lens.tool_call_budget for lens in lens_set.lenses} == {30}

    def own_budget(data):
        data["lenses"][3]["tool_call_budget"] = 20
    edited = load_lenses(*write_pair(tmp_path, own_budget))
    assert [lens.tool_call_budget for lens in edited.lenses] == [30, 30, 30, 20, 30, 30]


def test_the_performance_lens_owns_the_hot_path_rules(lens_set):
    lens = lens_set.by_id("host-overhead-and-hot-path")
    assert lens.owns == ("rule-p5", "rule-p6", "rule-p7")
    assert {"hot-path-copy", "forward-allocation", "rocm-forward-change", "aiter-wrapper-change"} <= lens.families
    assert lens.pr_types == {"attention", "moe-quant", "triton-kernel"} and lens.tiers == {1}


def test_the_lens_texts_start_from_the_code_map_and_show_both_complete_examples():
    import json
    import re

    text = LENSES_TEXT.read_text(encoding="utf-8")
    common = text[text.index('<a id="lens-common"></a>'):text.index('<a id="lens-dispatch-and-defaults"></a>')]
    assert "outputs/pr-N-code.md" in common and "tool-call budget" in common
    examples = [json.loads(block) for block in re.findall(r"```json\n(.*?)```", common, re.DOTALL)]
    assert [sorted(example) for example in examples] == [["findings", "lens", "pr"], ["decisions", "pr"]]
    assert {decision["action"] for decision in examples[1]["decisions"]} == {
        "keep", "merge", "downgrade", "keep_apart", "drop"}


def test_families_types_and_owned_sections_exist(lens_set):
    assert cross_check(lens_set, [family.id for family in CONFIG.families], [pr_type.id for pr_type in CONFIG.pr_types],
                       CATALOG.anchors()) == []


def test_every_rule_of_the_catalog_is_owned_by_a_lens(lens_set):
    owned = {anchor for lens in lens_set.lenses for anchor in lens.owns}
    rules = {anchor for anchor in CATALOG.anchors() if anchor.startswith("rule-")}
    assert rules - owned == set()


def test_cross_check_names_an_unknown_family_type_and_section(lens_set):
    problems = cross_check(lens_set, ["dispatch-change"], ["aiter-op"], ["rule-v2"])
    assert "lens 'dispatch-and-defaults': unknown diff family 'arch-string'" in problems
    assert "lens 'kernel-contracts': unknown PR type 'mori'" in problems
    assert "lens 'kernel-contracts': owns 'rule-b1', which is no section of the rule catalog" in problems


def write_pair(tmp_path, edit_yaml=None, text=None):
    data = yaml.safe_load(LENSES_YAML.read_text(encoding="utf-8"))
    if edit_yaml:
        edit_yaml(data)
    yaml_path, text_path = tmp_path / "lenses.yaml", tmp_path / "lenses.md"
    yaml_path.write_text(yaml.safe_dump(data, allow_unicode=True), encoding="utf-8")
    text_path.write_text(LENSES_TEXT.read_text(encoding="utf-8") if text is None else text, encoding="utf-8")
    return yaml_path, text_path


def test_a_copy_loads_like_the_original(tmp_path, lens_set):
    copy = load_lenses(*write_pair(tmp_path))
    assert copy.lenses == lens_set.lenses


@pytest.mark.parametrize("edit, message", [
    (lambda data: data["lenses"][0].pop("question"), "lens 'dispatch-and-defaults': missing key 'question'"),
    (lambda data: data["lenses"][1]["owns"].append("rule-v2"),
     "lens 'kernel-contracts': section 'rule-v2' is already owned by lens 'dispatch-and-defaults'"),
    (lambda data: data["lenses"][2]["selected_by"].update(tiers=[4]),
     "lens 'memory-graphs-streams': selected_by tiers must be a list of 1, 2 or 3"),
    (lambda data: data.update(fallback=["no-such-lens"]), "fallback must list lens ids defined under lenses"),
    (lambda data: data.update(min_lenses=5, max_lenses=3), "min_lenses is larger than max_lenses"),
    (lambda data: data["lenses"][3].update(cost_tokens=0), "cost_tokens must be a positive integer"),
    (lambda data: data.update(schema_version=2), "schema_version must be 1"),
    (lambda data: data.update(tool_call_budget=0), "tool_call_budget must be a positive integer"),
    (lambda data: data["lenses"][0].update(tool_call_budget="many"),
     "lens 'dispatch-and-defaults': tool_call_budget must be a positive integer"),
    (lambda data: data.update(merge={"same_text": 1.5, "nearby_lines": 5}),
     "merge must be {same_text: a ratio in (0, 1], nearby_lines: a non-negative integer}"),
])
def test_a_malformed_yaml_is_one_error_naming_the_problem(tmp_path, edit, message):
    with pytest.raises(LensError, match=message.replace("(", r"\(").replace(")", r"\)")):
        load_lenses(*write_pair(tmp_path, edit))


def test_a_lens_without_a_text_section_is_an_error(tmp_path):
    text = LENSES_TEXT.read_text(encoding="utf-8").replace('<a id="lens-tests-and-ci"></a>', "")
    with pytest.raises(LensError, match='no section <a id="lens-tests-and-ci"></a>'):
        load_lenses(*write_pair(tmp_path, text=text))


def test_a_text_section_without_a_lens_is_an_error(tmp_path):
    text = LENSES_TEXT.read_text(encoding="utf-8") + '\n<a id="lens-extra"></a>\n## Extra\n\nSomething.\n'
    with pytest.raises(LensError, match="section 'lens-extra' names no lens in the YAML"):
        load_lenses(*write_pair(tmp_path, text=text))


def test_lens_texts_give_the_output_file_and_the_finding_schema():
    text = LENSES_TEXT.read_text(encoding="utf-8")
    for needle in ("outputs/pr-N-lens-<lens>.json", "`severity`", "`type`", "`locations`", "`evidence`", "`lens`",
                   "作者应当", "已验证", "推测", "未经验证"):
        assert needle in text


def test_the_vllm_paths_a_lens_reads_first_exist(lens_set):
    from vllm_tree import vllm_main_paths

    known = set(vllm_main_paths())
    cited = {word.rstrip("/") for lens in lens_set.lenses for item in lens.read_first for word in item.split()
             if word.startswith(("vllm/", "tests/", ".buildkite/"))}
    assert cited and cited - known == set()
