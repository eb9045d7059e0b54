"""triage_pr.py --since on a local git repo with two pushes: the digest, plan and scaffold focus on the second."""

import json
import subprocess

import pytest

import triage_pr

AITER_OPS = "vllm/_aiter_ops.py"
ENVS = "vllm/envs.py"
BASE_FILES = {
    AITER_OPS: "class rocm_aiter_ops:\n    @classmethod\n    def is_enabled(cls) -> bool:\n        return cls._AITER_ENABLED\n",
    ENVS: "if TYPE_CHECKING:\n    VLLM_ROCM_USE_AITER: bool = False\n\nenvironment_variables = {\n"
          '    "VLLM_ROCM_USE_AITER": lambda: os.getenv("VLLM_ROCM_USE_AITER", "False").lower() in ("true", "1"),\n}\n',
}


def git(repo, *args):
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True).stdout.strip()


def commit(repo, files, message):
    for path, text in files.items():
        target = repo / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)
    git(repo, "add", "-A")
    git(repo, "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-q", "-m", message)
    return git(repo, "rev-parse", "HEAD")


@pytest.fixture
def pushes(tmp_path):
    """A clone with the base, a first push (env var + AITER wrapper) and a second (AITER wrapper only)."""
    repo = tmp_path / "vllm"
    repo.mkdir()
    git(repo, "init", "-q")
    base = commit(repo, BASE_FILES, "base")
    first = commit(repo, {
        ENVS: BASE_FILES[ENVS].replace("    VLLM_ROCM_USE_AITER: bool = False\n",
                                       "    VLLM_ROCM_USE_AITER: bool = False\n    VLLM_ROCM_AITER_FAST: bool = True\n"),
        AITER_OPS: BASE_FILES[AITER_OPS] + "\n    @classmethod\n    def is_fast_enabled(cls) -> bool:\n"
                                           "        return cls._AITER_ENABLED and envs.VLLM_ROCM_AITER_FAST\n",
    }, "first push")
    second = commit(repo, {
        AITER_OPS: (repo / AITER_OPS).read_text() + "\n    @classmethod\n    def is_faster_enabled(cls) -> bool:\n"
                                                    "        return cls.is_fast_enabled()\n",
    }, "second push")
    return repo, base, first, second


def pr_document(repo, base, head, checkout=True):
    diff = git(repo, "diff", base, head) + "\n"
    files = [{"filename": line.split("\t")[2], "status": "modified", "additions": int(line.split("\t")[0]),
              "deletions": int(line.split("\t")[1])} for line in git(repo, "diff", "--numstat", base, head).splitlines()]
    meta = {"fetched_at": "2026-08-01T10:00:00Z", "api_url": "https://api.github.com", "repo": "vllm-project/vllm",
            "number": 777, "requests": 5, "rate_limit": {"remaining": 4990, "reset": "2026-08-01T11:00:00Z"},
            "diff_source": "api", "files_without_patch": [], "files_truncated": False, "pages_capped": []}
    if checkout:
        meta["checkout"] = {"path": str(repo), "base_sha": base, "head_sha": head, "merge_base": base}
    return {
        "pr": {"number": 777, "title": "[ROCm] AITER fast path switch", "body": "Adds a switch for the AITER fast path.",
               "author": "octo-dev", "state": "open", "draft": False, "labels": ["rocm"],
               "created_at": "2026-08-01T09:00:00Z", "updated_at": "2026-08-01T09:30:00Z", "merged_at": None,
               "additions": sum(f["additions"] for f in files), "deletions": sum(f["deletions"] for f in files),
               "changed_files": len(files), "commits": 2,
               "head": {"ref": "fast", "sha": head, "repo": "octo-dev/vllm"}, "base": {"ref": "main", "sha": base},
               "html_url": "https://github.com/vllm-project/vllm/pull/777"},
        "diff": diff, "files": files, "issue_comments": [], "review_comments": [], "reviews": [],
        "linked_issues": [], "meta": meta,
    }


def write(tmp_path, document):
    path = tmp_path / "pr-777.json"
    path.write_text(json.dumps(document))
    return str(path)


def triage_json(capsys, *argv):
    assert triage_pr.main([*argv, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def rule_anchors(plan):
    return {section["anchor"] for section in plan["sections"]}


def test_since_lists_only_the_second_push_and_narrows_the_plan(pushes, tmp_path, capsys):
    repo, base, first, second = pushes
    pr_json = write(tmp_path, pr_document(repo, base, second))
    full = triage_json(capsys, pr_json)
    focused = triage_json(capsys, pr_json, "--since", first)
    since = focused["since"]
    assert since["reviewed_head"] == first and since["head"] == second and since["rebased"] is False
    assert [entry["path"] for entry in since["files"]] == [AITER_OPS]
    [hunk] = since["files"][0]["hunks"]
    assert hunk["start"] <= 10 <= hunk["start"] + hunk["lines"]  # the is_faster_enabled lines
    assert {rule["id"] for rule in full["rules"]} >= {"V1", "B6"}
    lost = rule_anchors(full["reading_plan"]) - rule_anchors(focused["reading_plan"])
    assert any("v1" in anchor.lower() for anchor in lost), lost  # the env-var rule came from envs.py only
    assert any("b6" in anchor.lower() for anchor in rule_anchors(focused["reading_plan"]))
    assert "since" not in full


def test_digest_has_a_since_section_naming_the_changed_hunks(pushes, tmp_path, capsys):
    repo, base, first, second = pushes
    assert triage_pr.main([write(tmp_path, pr_document(repo, base, second)), "--since", first[:7]]) == 0
    digest = capsys.readouterr().out
    section = digest.split(f"## Since {first[:7]}\n", 1)[1].split("\n## ", 1)[0]
    assert f"previous review: head {first[:7]}; now {second[:7]}" in section
    assert f"  {AITER_OPS} [modified]: lines " in section and ENVS not in section
    assert digest.index("## Since") < digest.index("## Relevance")


def test_scaffold_says_what_the_previous_review_covered(pushes, tmp_path, capsys):
    repo, base, first, second = pushes
    report = tmp_path / "pr-777-review.md"
    assert triage_pr.main([write(tmp_path, pr_document(repo, base, second)), "--since", first,
                           "--scaffold", str(report)]) == 0
    text = report.read_text()
    line = next(line for line in text.splitlines() if "上一次 review" in line)
    assert f"`{first[:7]}`" in line and f"`{AITER_OPS}`" in line and "（1 个）" in line
    assert text.index("## 4.") < text.index(line) < text.index("## 5.")


def test_unknown_old_sha_is_one_clear_line(pushes, tmp_path, capsys):
    repo, base, first, second = pushes
    assert triage_pr.main([write(tmp_path, pr_document(repo, base, second)), "--since", "deadbee"]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "reviewed head deadbee is not a commit in" in err and "fetch" in err


def test_no_recorded_checkout_asks_for_one_or_repo(pushes, tmp_path, capsys):
    repo, base, first, second = pushes
    pr_json = write(tmp_path, pr_document(repo, base, second, checkout=False))
    assert triage_pr.main([pr_json, "--since", first]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "records no checkout" in err and "--checkout" in err and "--repo" in err
    assert triage_json(capsys, pr_json, "--since", first, "--repo", str(repo))["since"]["files"]


def test_since_usage_errors(tmp_path, capsys):
    with pytest.raises(SystemExit) as caught:
        triage_pr.main(["x.json", "--since", "not-a-sha"])
    assert caught.value.code == 2
    with pytest.raises(SystemExit) as caught:
        triage_pr.main(["x.json", "--repo", str(tmp_path)])
    assert caught.value.code == 2


def test_a_rebase_keeps_only_the_prs_files(pushes, tmp_path, capsys):
    repo, base, first, second = pushes
    git(repo, "checkout", "-q", "-b", "main2", base)
    new_base = commit(repo, {"vllm/other.py": "x = 1\n"}, "main moved")
    git(repo, "checkout", "-q", "-b", "rebased", new_base)
    git(repo, "-c", "user.name=t", "-c", "user.email=t@example.com", "cherry-pick", f"{base}..{first}")
    rebased = git(repo, "rev-parse", "HEAD")
    since = triage_json(capsys, write(tmp_path, pr_document(repo, new_base, rebased)), "--since", first)["since"]
    assert since["rebased"] is True and since["files"] == [] and since["outside_pr"] == ["vllm/other.py"]


def test_a_push_into_a_quantized_moe_method_file_makes_the_focused_plan_deep(pushes, tmp_path, capsys):
    repo, base, first, second = pushes
    quark = "vllm/model_executor/layers/quantization/quark/quark_moe.py"
    third = commit(repo, {quark: "class QuarkMoEMethod:\n    def apply(self, layer, x):\n        return x\n"}, "third push")
    pr_json = write(tmp_path, pr_document(repo, base, third))
    focused = triage_json(capsys, pr_json, "--since", second)
    assert focused["reading_plan"]["depth"] == "deep"
    assert focused["reading_plan"]["deep_reasons"] == [f"quantized-MoE method or oracle file(s): {quark}"]
    wider = triage_json(capsys, pr_json, "--since", first)["reading_plan"]
    assert f"quantized-MoE method or oracle file(s): {quark}" in wider["deep_reasons"]
