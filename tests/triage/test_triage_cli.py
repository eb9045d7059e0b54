"""scripts/triage_pr.py as a command: inputs, outputs, exit codes, the scaffold."""

import json
import re
import shutil
import subprocess
import sys

import pytest

import triage_pr
from conftest import ROOT, SCRIPTS_DIR
from triage_support import file_diff, make_document
from vllm_rocm_review.report import report_format as fmt
from vllm_rocm_review.report.report_check import LEVEL_ERROR, check_report

EXAMPLE = ROOT / "examples" / "example-pr.json"
DIFF = file_diff("vllm/v1/attention/backends/rocm_aiter_fa.py", added=["    n = int(seq_lens.max().item())"]) \
    + file_diff("vllm/envs.py", added=["    VLLM_ROCM_FAST: bool = False"])


@pytest.fixture
def pr_json(tmp_path):
    path = tmp_path / "pr-4242.json"
    path.write_text(json.dumps(make_document(DIFF, title="[ROCm] Speed up decode", body="Decode is 2x faster.")),
                    encoding="utf-8")
    return path


def run(argv, capsys):
    code = triage_pr.main([str(arg) for arg in argv])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_digest_is_compact_and_names_every_part(pr_json, capsys):
    code, out, err = run([pr_json], capsys)
    assert code == 0 and err == ""
    for heading in ("## Relevance: full", "## PR types and rules", "## Backbone tiers and flags",
                    "## Reading plan: deep", "## Mechanical checks"):
        assert heading in out
    assert "family cudagraph-unsafe -> B7 B3: vllm/v1/attention/backends/rocm_aiter_fa.py:10" in out
    assert "2x in body: [unverified]" in out
    assert re.search(r"^plan: \d+ of \d+ catalog lines \(\d+%\)", out, re.MULTILINE)
    assert len(out.splitlines()) <= 80


def test_json_has_stable_keys_and_is_deterministic(pr_json, capsys):
    first = run([pr_json, "--json"], capsys)[1]
    second = run([pr_json, "--json"], capsys)[1]
    assert first == second
    result = json.loads(first)
    assert list(result) == ["pr", "relevance", "relevance_evidence", "rocm_files", "shared_files", "pr_types",
                            "families", "rules", "judgment_rules", "skipped_rules", "tiers", "flags",
                            "reading_plan", "checks", "lenses"]
    assert result["relevance"] == "full"
    assert list(result["checks"]) == ["mori-symbols", "env-vars", "magic-constants", "perf-claims", "ci",
                                      "prompt-injection"]


def test_expand_prints_the_planned_catalog_text(pr_json, capsys):
    code, out, _ = run([pr_json, "--expand"], capsys)
    assert code == 0
    assert out.startswith("# Reading plan for PR #4242: deep, ")
    assert '<a id="core-discipline"></a>' in out and '<a id="rule-b3"></a>' in out
    assert "Checklist (apply each" in out
    plain = json.loads(run([pr_json, "--json"], capsys)[1])
    expanded = json.loads(run([pr_json, "--json", "--expand"], capsys)[1])
    assert "text" not in plain["reading_plan"]
    assert '<a id="rule-b3"></a>' in expanded["reading_plan"]["text"]


def test_output_is_written_atomically_and_equals_stdout(pr_json, tmp_path, capsys):
    stdout = run([pr_json], capsys)[1]
    target = tmp_path / "out" / "triage.txt"
    target.parent.mkdir()
    target.write_text("old content\n", encoding="utf-8")
    code, out, err = run([pr_json, "--output", target], capsys)
    assert code == 0 and out == "" and f"wrote {target}" in err
    assert target.read_text(encoding="utf-8") == stdout
    assert [path.name for path in target.parent.iterdir()] == ["triage.txt"]  # no temporary file left


def test_output_into_a_directory_fails_cleanly(pr_json, tmp_path, capsys):
    code, out, err = run([pr_json, "--output", tmp_path], capsys)
    assert code == 1 and out == ""
    assert err.startswith("error: ") and len(err.strip().splitlines()) == 1


@pytest.mark.parametrize("content, message", [
    ("{not json", "not JSON"),
    ('{"pr": {}}', "not a PR document"),
    ("[1, 2]", "not a PR document"),
])
def test_bad_input_is_one_line_and_exit_1(tmp_path, capsys, content, message):
    path = tmp_path / "bad.json"
    path.write_text(content, encoding="utf-8")
    code, out, err = run([path], capsys)
    assert code == 1 and out == ""
    assert len(err.strip().splitlines()) == 1 and message in err and "fetch_pr_data.py" in err


def test_missing_input_is_exit_1(tmp_path, capsys):
    code, _, err = run([tmp_path / "nope.json"], capsys)
    assert code == 1 and "no such file" in err


@pytest.mark.parametrize("argv", [["--force"], ["--scaffold", "r.md", "--json"], []])
def test_usage_errors_exit_2(pr_json, capsys, argv):
    with pytest.raises(SystemExit) as raised:
        triage_pr.main(([str(pr_json)] if argv else []) + argv)
    assert raised.value.code == 2


def test_scaffold_refuses_to_overwrite_without_force(pr_json, tmp_path, capsys):
    report = tmp_path / "outputs" / "pr-4242-review.md"
    code, out, _ = run([pr_json, "--scaffold", report], capsys)
    assert code == 0 and out.strip() == str(report)
    report.write_text("my half-written review\n", encoding="utf-8")
    code, out, err = run([pr_json, "--scaffold", report], capsys)
    assert code == 1 and "--force" in err
    assert report.read_text(encoding="utf-8") == "my half-written review\n"
    code, _, _ = run([pr_json, "--scaffold", report, "--force"], capsys)
    assert code == 0 and report.read_text(encoding="utf-8").startswith("# PR #4242: [ROCm] Speed up decode\n")


@pytest.mark.parametrize("force", [[], ["--force"]])
def test_scaffold_into_a_directory_asks_for_a_file_path(pr_json, tmp_path, capsys, force):
    code, out, err = run([pr_json, "--scaffold", tmp_path, *force], capsys)
    assert code == 1 and out == ""
    assert err.strip() == f"error: --scaffold {tmp_path} is a directory; give the report's file path, " \
                          "e.g. outputs/pr-4242-review.md"


def test_scaffold_header_is_exact_and_placeholders_are_flagged(pr_json, tmp_path, capsys):
    report = tmp_path / "r.md"
    run([pr_json, "--scaffold", report], capsys)
    text = report.read_text(encoding="utf-8")
    document = json.loads(pr_json.read_text(encoding="utf-8"))
    assert text.splitlines()[:5] == fmt.render_header_lines(document, "full")
    for heading in fmt.SECTION_HEADINGS:
        assert heading in text.splitlines()
    codes = {finding.code for finding in check_report(text, document) if finding.level == LEVEL_ERROR}
    assert "PLACEHOLDER" in codes


def test_filled_scaffold_passes_the_checker(pr_json, tmp_path, capsys):
    report = tmp_path / "r.md"
    run([pr_json, "--scaffold", report], capsys)
    text = fill_placeholders(report.read_text(encoding="utf-8"))
    document = json.loads(pr_json.read_text(encoding="utf-8"))
    errors = [finding for finding in check_report(text, document) if finding.level == LEVEL_ERROR]
    assert errors == []


def test_scaffold_for_a_non_rocm_pr_says_rules_were_skipped(tmp_path, capsys):
    path = tmp_path / "pr.json"
    path.write_text(json.dumps(make_document(file_diff("vllm/entrypoints/cli.py", added=["x = 1"]), title="[CLI] Fix")),
                    encoding="utf-8")
    report = tmp_path / "r.md"
    run([path, "--scaffold", report], capsys)
    text = report.read_text(encoding="utf-8")
    assert "**ROCm 相关性**: 不相关" in text and "这个 PR 与 ROCm 无关，因此跳过了 AITER/mori 相关的检查" in text


# --- an unusable rule catalog ----------------------------------------------------------


@pytest.fixture
def bundle_copy(tmp_path):
    """A copy of the skill's scripts and references, so a test can break its catalog without touching the real one."""
    root = tmp_path / "skill"
    shutil.copytree(SCRIPTS_DIR, root / "scripts", ignore=shutil.ignore_patterns("__pycache__"))
    (root / "references").mkdir()
    for name in ("rocm-surface.yaml", "vllm-rocm-review-rules.md", "review-lenses.yaml", "review-lenses.md"):
        shutil.copy(ROOT / "references" / name, root / "references" / name)
    return root


def run_copy(bundle, pr_path, *options):
    done = subprocess.run([sys.executable, str(bundle / "scripts" / "triage_pr.py"), str(pr_path), *options],
                          capture_output=True, text=True, timeout=60)
    return done.returncode, done.stdout, done.stderr


def test_the_bundle_copy_works_with_its_catalog_intact(bundle_copy, pr_json):
    code, out, err = run_copy(bundle_copy, pr_json, "--expand")
    assert code == 0 and '<a id="rule-b3"></a>' in out and err == ""


@pytest.mark.parametrize("breakage, reason, mode", [
    ("delete", "not found", ["--expand"]),
    ("delete", "not found", []),
    ("delete", "not found", ["--json"]),
    ("empty", "empty", ["--expand"]),
    ("directory", "directory", ["--expand"]),
    ("binary", "not UTF-8", ["--expand"]),
])
def test_unusable_catalog_is_one_error_line_and_exit_1(bundle_copy, pr_json, breakage, reason, mode):
    catalog = bundle_copy / "references" / "vllm-rocm-review-rules.md"
    catalog.unlink()
    if breakage == "empty":
        catalog.write_text("\n", encoding="utf-8")
    elif breakage == "directory":
        catalog.mkdir()
    elif breakage == "binary":
        catalog.write_bytes(b"\xff\xfe<a id=\"toc\"></a>\n# \x80\n")
    code, out, err = run_copy(bundle_copy, pr_json, *mode)
    assert code == 1 and out == ""
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert err.startswith("error: the rule catalog is unusable") and reason in err
    assert "git checkout references/vllm-rocm-review-rules.md" in err


def test_catalog_without_a_planned_rule_section_is_an_error(bundle_copy, pr_json):
    catalog = bundle_copy / "references" / "vllm-rocm-review-rules.md"
    text = catalog.read_text(encoding="utf-8")
    catalog.write_text(text.replace('<a id="rule-b3"></a>\n', ""), encoding="utf-8")
    code, out, err = run_copy(bundle_copy, pr_json, "--expand")
    assert code == 1 and out == ""
    assert err.startswith("error: MISSING-RULE-TEXT: references/vllm-rocm-review-rules.md has no section rule-b3")
    assert "git checkout references/vllm-rocm-review-rules.md" in err and len(err.strip().splitlines()) == 1


# --- digest and scaffold wording ---------------------------------------------------------


def test_files_without_patch_skip_empty_files_and_name_checkout_or_sources(tmp_path, capsys):
    document = make_document(DIFF, title="[ROCm] Speed up decode")
    document["files"] += [
        {"filename": "vllm/v1/attention/ops/__init__.py", "status": "added", "additions": 0, "deletions": 0},
        {"filename": "vllm/v1/attention/ops/rocm_big_table.py", "status": "added", "additions": 5000, "deletions": 0},
    ]
    document["pr"]["changed_files"] = len(document["files"])
    document["meta"]["files_without_patch"] = [entry["filename"] for entry in document["files"][-2:]]
    path = tmp_path / "pr.json"
    path.write_text(json.dumps(document), encoding="utf-8")
    out = run([path], capsys)[1]
    assert "; no patch for 1 file(s): read them in the checkout or sources" in out.splitlines()[1]
    assert json.loads(run([path, "--json"], capsys)[1])["pr"]["files_without_patch"] == [
        "vllm/v1/attention/ops/rocm_big_table.py"]


def test_digest_says_a_shared_reason_once_and_cuts_it_at_a_word(tmp_path, capsys):
    kernels = [f"csrc/quantization/fused_kernels/kernel_{index}.cu" for index in range(3)]
    diff = "".join(file_diff(path, added=["  int x = 0;"]) for path in kernels) \
        + file_diff("vllm/model_executor/layers/quantization/utils/fp8_utils.py",
                    added=["    if current_platform.is_rocm() and x:", "    if current_platform.is_rocm() and y:"])
    path = tmp_path / "pr.json"
    path.write_text(json.dumps(make_document(diff, title="[Kernel] Fuse quant")), encoding="utf-8")
    out = run([path], capsys)[1]
    lines = [line for line in out.splitlines() if line.startswith("  csrc/")]
    assert len(lines) == 3 and lines[0].endswith("…") and not lines[0][:-1].endswith(" ")
    reason = lines[0].split(" — ", 1)[1][:-1]
    assert all(line.endswith(f"same reason as {kernels[0]}") for line in lines[1:])
    full = json.loads(run([path, "--json"], capsys)[1])["shared_files"][0]["why"][0]
    assert full.startswith(reason) and full[len(reason)] == " "


def test_scaffold_for_a_partial_pr_lists_rocm_and_shared_files_apart(tmp_path, capsys):
    diff = file_diff("vllm/v1/attention/backends/triton_attn.py", added=["    x = 1"]) \
        + file_diff("vllm/v1/attention/backends/rocm_attn.py", added=["    x = 1"]) \
        + file_diff("vllm/v1/attention/backends/flash_attn.py", added=["    x = 1"]) \
        + file_diff("vllm/v1/attention/backends/flashinfer.py", added=["    x = 1"])
    path = tmp_path / "pr.json"
    path.write_text(json.dumps(make_document(diff, title="[Attention] Rename a field")), encoding="utf-8")
    report = tmp_path / "r.md"
    assert run([path, "--scaffold", report], capsys)[0] == 0
    line = next(line for line in report.read_text(encoding="utf-8").splitlines() if "只部分涉及 ROCm" in line)
    assert "ROCm 会用到的文件：vllm/v1/attention/backends/rocm_attn.py。" in line
    assert "与 CUDA 共用、需要检查跨后端回归的文件：vllm/v1/attention/backends/triton_attn.py。" in line
    assert "flash_attn.py" not in line


def test_scaffold_for_a_full_pr_has_no_partial_note(pr_json, tmp_path, capsys):
    report = tmp_path / "r.md"
    run([pr_json, "--scaffold", report], capsys)
    assert "只部分涉及 ROCm" not in report.read_text(encoding="utf-8")


def test_scaffold_asks_about_an_unchecked_mori_sweep(tmp_path):
    from vllm_rocm_review.report.scaffold import render_scaffold
    from vllm_rocm_review.triage.triage import triage
    from triage_support import CATALOG, CONFIG

    document = make_document(file_diff("vllm/distributed/device_communicators/all2all.py",
                                       added=["    from mori.io import IOEngine"]), title="[ROCm] MoRI")
    absent = triage(document, CONFIG, CATALOG, snapshot_path=tmp_path / "absent.json")
    asked = render_scaffold(document, absent)
    assert "新代码用到的 mori 名称（mori.io.IOEngine）都真实存在吗？逐个在 mori 源码里确认" in asked
    assert "注意：这一项没有完整检查（缺少参照数据），不能当作已通过。" in asked
    snapshot = tmp_path / "mori-structure.json"
    snapshot.write_text(json.dumps({"tree": [{"path": "python/mori/io/__init__.py"}]}), encoding="utf-8")
    checked = triage(document, CONFIG, CATALOG, snapshot_path=snapshot)
    assert "mori 名称" not in render_scaffold(document, checked)


def test_bundled_example_runs(capsys):
    code, out, _ = run([EXAMPLE, "--json"], capsys)
    assert code == 0
    result = json.loads(out)
    assert result["relevance"] == "full"
    assert result["checks"]["ci"]["items"][0]["infrastructure"] is True


FINDING = """**⚠️【正确性】解码快路径在 cudagraph 捕获区内调用 `.item()`** `[推测]`
- **问题**: `vllm/v1/attention/backends/rocm_aiter_fa.py:10` 在 forward 中调用 `seq_lens.max().item()`，这是一次主机同步。
- **影响**: 在 gfx942 上开启 FULL cudagraph 捕获时，这一行会让捕获失败或把第一次的长度固定下来。
- **行动**: 建议作者把最大长度放进 metadata builder 中预先计算，并补一个捕获模式的测试。"""


def fill_placeholders(text):
    """What an agent does with the scaffold: every TODO(agent) line becomes real content."""
    replacements = {
        "## 1.": "该 PR 为 ROCm 注意力后端增加解码快路径，目的是减少纯解码批次的开销。作者认为原有的变长路径在这种批次上做了多余的工作。"
                 "改动通过新的环境变量控制，默认开启。PR 描述没有说明为什么选择默认开启。",
        "## 2.": "- 注意力后端：新增纯解码批次的快路径。\n- 环境变量：新增一个开关，默认开启。",
        "## 3.": FINDING,
        "## 4.": "目前没有评审意见或讨论。",
        "## 5.": "⚠️ NEEDS WORK：快路径在捕获区内做主机同步，需要先确认 cudagraph 下的行为。",
    }
    lines, section, done = [], None, set()
    for line in text.splitlines():
        if line.startswith("## "):
            section = line[:5]
        if fmt.PLACEHOLDER not in line:
            lines.append(line)
            continue
        if line.startswith("|"):
            count = "1" if line.startswith("| ⚠️") else "0"
            lines.append(re.sub(re.escape(fmt.PLACEHOLDER), count, line))
        elif section == "## 3." and "按 🔴 → ⚠️ → 📝 排序" in line:
            lines.append(replacements[section])
        elif section != "## 3." and section not in done:
            done.add(section)
            lines.append(replacements[section])
    return "\n".join(lines) + "\n"


def test_unusable_lens_file_is_one_error_line_and_exit_1(bundle_copy, pr_json):
    lenses = bundle_copy / "references" / "review-lenses.md"
    lenses.write_text(lenses.read_text(encoding="utf-8").replace('<a id="lens-kernel-contracts"></a>', ""),
                      encoding="utf-8")
    code, out, err = run_copy(bundle_copy, pr_json)
    assert code == 1 and out == "" and len(err.splitlines()) == 1
    assert err.startswith("error: the review lenses are unusable (") and "lens-kernel-contracts" in err
    assert err.rstrip().endswith("git checkout references/review-lenses.yaml references/review-lenses.md")
