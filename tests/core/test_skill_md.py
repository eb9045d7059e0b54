"""SKILL.md follows the Claude skill rules, stays small, and names only files that exist."""

import re

import yaml

from conftest import ROOT

SKILL_MD = ROOT / "SKILL.md"
ALLOWED_KEYS = {"name", "description", "license", "allowed-tools", "metadata", "compatibility"}
# Paths the agent creates at review time or that update_skill.py fills; they need not exist in git.
GENERATED_PREFIXES = ("outputs/pr-", "references/upstream/")
BUNDLE_PATH = re.compile(r"`((?:scripts|references|outputs|tests|examples)/[A-Za-z0-9_./<>-]*)")


def read_front_matter():
    text = SKILL_MD.read_text(encoding="utf-8")
    match = re.match(r"^---\n(.*?)\n---\n", text, re.DOTALL)
    assert match, "SKILL.md must start with a --- front matter block (LF line endings, no BOM)"
    return yaml.safe_load(match.group(1)), text


def test_front_matter_keys_and_limits():
    meta, _ = read_front_matter()
    assert set(meta) <= ALLOWED_KEYS
    assert meta["name"] == "vllm-rocm-pr-review"
    assert re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", meta["name"]) and len(meta["name"]) <= 64
    description = meta["description"]
    assert isinstance(description, str) and 0 < len(description) <= 1024
    assert "<" not in description and ">" not in description
    assert "review vllm PR" in description and "帮我review vllm的PR" in description
    if "compatibility" in meta:
        assert len(meta["compatibility"]) <= 500


def test_body_is_at_most_500_lines_and_has_no_home_paths():
    _, text = read_front_matter()
    assert len(text.splitlines()) <= 500
    assert "~/" not in text and "/Users/" not in text and "/home/" not in text


def test_no_code_fence_longer_than_30_lines():
    _, text = read_front_matter()
    fences = re.findall(r"```[a-z]*\n(.*?)```", text, re.DOTALL)
    assert fences
    assert max(len(block.splitlines()) for block in fences) <= 30


def test_every_bundle_path_it_names_exists():
    _, text = read_front_matter()
    missing = []
    for raw in sorted(set(BUNDLE_PATH.findall(text))):
        path = raw.rstrip(".,")
        if "<" in path or path.startswith(GENERATED_PREFIXES):
            continue
        if not (ROOT / path).exists():
            missing.append(path)
    assert not missing, f"SKILL.md names files that are not in the bundle: {missing}"


def test_every_script_it_runs_exists_and_each_step_has_a_heading():
    _, text = read_front_matter()
    scripts = set(re.findall(r"python3 (scripts/[a-z_]+\.py)", text))
    assert scripts == {
        "scripts/prepare_review.py",
        "scripts/fetch_pr_data.py",
        "scripts/triage_pr.py",
        "scripts/check_report.py",
        "scripts/update_skill.py",
        "scripts/context_pack.py",
        "scripts/merge_findings.py",
        "scripts/post_report.py",
        "scripts/review_queue.py",
    }
    for script in scripts:
        assert (ROOT / script).is_file(), script
    for step in range(1, 9):
        assert re.search(rf"^### Step {step}:", text, re.MULTILINE), f"step {step} heading missing"


def test_ci_runs_exactly_the_readme_test_commands():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    block = ci.split("# --- README: run the test suite")[1].split("# ---\n")[0]
    commands = [line.split(" 2>&1")[0] for line in block.splitlines() if line.startswith(("python3 ", ".venv/"))]
    assert len(commands) == 3
    for command in commands:
        assert command in readme, f".ci/run runs {command!r}, which README.md does not show"
