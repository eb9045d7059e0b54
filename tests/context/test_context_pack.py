"""The context pack over a repository the test builds: every section and flag, the CLI edges."""

import json

import pytest

import context_pack
from git_pr import pr_document
from vllm_rocm_review.context.pack import build_pack
from vllm_rocm_review.core.surface import load_surface
from context_repo import small_pr_path  # noqa: F401  (fixtures)
from context_repo import small_repo  # noqa: F401

SURFACE = load_surface()


@pytest.fixture(scope="module")
def pack(small_repo):
    root, base, head = small_repo
    return build_pack(pr_document(root, base, head, 7001), None, SURFACE["context_pack"], SURFACE)


def flags(pack, code):
    return [(f["path"], f["line"]) for f in pack["flags"] if f["code"] == code]


def symbol(pack, qualname):
    return next(s for s in pack["symbols"] if s["qualname"] == qualname)


def test_meta_records_the_commits_and_the_absent_upstream_section(pack, small_repo):
    _, base, head = small_repo
    assert pack["meta"] == {"base_sha": base, "head_sha": head, "mode": "checkout", "not_possible": [],
                            "upstream": "not collected"}
    assert pack["upstream"] == {"status": "not collected"}
    assert list(pack) == ["pr", "meta", "symbols", "callers", "twins", "env_vars", "upstream", "ci_coverage",
                          "custom_ops", "hot_path_copies", "undone_fixes", "platform_twins",
                          "stale_call_sites", "flags", "code_map"]
    assert pack["code_map"] == {"status": "not built"}


def test_nested_method_span_and_signature_change(pack):
    method = symbol(pack, "Outer.Inner.method")
    assert method["base"]["span"] == "vllm/nested.py:3-4"
    assert method["head"]["signature"] == "def method(self, a, b=0)"
    assert method["signature_changed"] is True


def test_renamed_file_is_compared_with_its_old_path(pack):
    compute = symbol(pack, "Layer._compute")
    assert compute["path"] == "vllm/layers/new_name.py"
    assert compute["base_path"] == "vllm/layers/old_name.py"
    assert (compute["base"]["span"], compute["head"]["span"]) == ("vllm/layers/old_name.py:8-9", "vllm/layers/new_name.py:8-11")
    assert compute["signature_changed"] is False


def test_callers_outside_the_diff_are_marked(pack):
    method = pack["callers"]["method"]
    sites = {(s["path"], s["line"]): s["in_diff"] for s in method["sites"]}
    assert sites == {("vllm/user.py", 8): False}  # an unchanged line the diff moved
    compute = pack["callers"]["_compute"]
    assert [(s["path"], s["line"], s["in_diff"]) for s in compute["sites"]] == [("vllm/layers/new_name.py", 6, False)]


def test_twin_signature_change_flags_the_unchanged_twins(pack):
    twin = next(t for t in pack["twins"] if t["name"] == "get_kv_cache_shape")
    assert twin["signature_changed_in"] == ["vllm/v1/attention/backends/alpha.py"]
    assert twin["unchanged_twins"] == ["vllm/v1/attention/backends/beta.py:5", "vllm/v1/attention/backends/gamma.py:3"]
    message = next(f["message"] for f in pack["flags"] if f["code"] == "TWIN-DIVERGES")
    assert "signature changes" in message and "in files the PR also edits: vllm/v1/attention/backends/beta.py:5" in message


def test_capability_set_true_without_code(pack):
    assert flags(pack, "CAPABILITY-UNIMPLEMENTED") == [("vllm/v1/attention/backends/beta.py", 2)]


def test_env_var_flags(pack, small_repo):
    assert flags(pack, "ENV-REDUNDANT-DEFAULT") == []  # off by default (flags_off): tests pin defaults on purpose
    root, base, head = small_repo
    every_code = {**SURFACE["context_pack"], "flags_off": []}
    assert flags(build_pack(pr_document(root, base, head, 7001), None, every_code, SURFACE),
                 "ENV-REDUNDANT-DEFAULT") == [("tests/kernels/test_alpha.py", 2)]
    assert flags(pack, "ENV-UNREGISTERED") == [("vllm/user.py", 6)]
    assert flags(pack, "ENV-REMOVED") == [("vllm/envs.py", None)]
    assert flags(pack, "ENV-DEFAULT-CHANGED") == [("vllm/envs.py", 10)]
    level = pack["env_vars"]["VLLM_LEVEL"]
    assert (level["base"]["default"], level["head"]["default"]) == ("1", "2")
    assert pack["env_vars"]["VLLM_USE_FOO"]["readers_at_head"] == {"total": 1, "sites": ["tests/kernels/test_alpha.py:2"]}


def test_ci_coverage_by_path_and_mirror(pack):
    assert pack["ci_coverage"] == {
        "tests/kernels/test_alpha.py": [".buildkite/test-amd.yaml: Kernels Alpha [mi325_1]"],
        "tests/misc/test_orphan.py": [],
        "tests/v1/attention/test_new.py": [".buildkite/test_areas/attention.yaml: V1 attention [mi300_1]"],
    }
    assert flags(pack, "CI-PATH-MISSING") == [(".buildkite/test-amd.yaml", 6), (".buildkite/test-amd.yaml", 9)]


def test_custom_op_returning_a_view_of_an_input_is_aliasing(pack):
    found = [(op["path"], op["op"], op["impl"], op["fake_impl"], op["mutates_args"], op["returns_inputs"])
             for op in pack["custom_ops"]]
    assert found == [("vllm/lib_ops.py", "vllm::scale_in_place", "scale_in_place", None, [], ["x"]),
                     ("vllm/ops.py", "my_op", "my_op_impl", "my_op_fake", ["out"], ["x"])]
    assert flags(pack, "OP-ALIASING") == [("vllm/lib_ops.py", 5), ("vllm/ops.py", 6)]


def test_hot_path_copies(pack):
    found = [(c["line"], c["op"], c["tensor"], c["role"]) for c in pack["hot_path_copies"]]
    assert found == [(9, "contiguous", "self.weight", "weight"), (10, "empty_like", "residual", "accumulator")]
    assert flags(pack, "HOT-PATH-COPY") == [("vllm/layers/new_name.py", 9), ("vllm/layers/new_name.py", 10)]


def test_every_flag_has_the_shared_shape(pack):
    for entry in pack["flags"]:
        assert list(entry) == ["code", "path", "line", "message"]


def test_cli_writes_both_files_and_is_deterministic(small_pr_path, tmp_path, capsys):
    digest = tmp_path / "out" / "pr-7001-context.md"
    digest.parent.mkdir()
    assert context_pack.main([str(small_pr_path), "--offline", "--output", str(digest)]) == 0
    first = (digest.read_text(), digest.with_suffix(".json").read_text())
    assert capsys.readouterr().out == first[0]
    assert context_pack.main([str(small_pr_path), "--offline", "--output", str(digest), "--json"]) == 0
    assert capsys.readouterr().out == first[1]
    assert (digest.read_text(), digest.with_suffix(".json").read_text()) == first
    assert "pin aiter: not pinned" in first[0]  # the small repo has no ROCm base Dockerfile
    assert "OP-ALIASING vllm/ops.py:6" in first[0]


def test_digest_respects_max_lines(small_pr_path, tmp_path, capsys):
    digest = tmp_path / "pr-7001-context.md"
    assert context_pack.main([str(small_pr_path), "--offline", "--output", str(digest), "--max-lines", "20"]) == 0
    assert len(capsys.readouterr().out.splitlines()) <= 20


def test_missing_head_commit_is_one_line_error(small_repo, tmp_path, capsys):
    root, base, head = small_repo
    document = pr_document(root, base, head, 7002)
    document["meta"]["checkout"]["head_sha"] = "f" * 40
    path = tmp_path / "pr.json"
    path.write_text(json.dumps(document))
    assert context_pack.main([str(path), "--offline", "--output", str(tmp_path / "x.md")]) == 1
    error = capsys.readouterr().err.strip()
    assert error.startswith("error: head commit ffffffffffff is not in") and "\n" not in error
    assert not (tmp_path / "x.md").exists()


def test_no_checkout_and_no_sources_is_an_error(small_repo, tmp_path, capsys):
    root, base, head = small_repo
    path = tmp_path / "pr.json"
    path.write_text(json.dumps(pr_document(root, base, head, 7003, checkout=False)))
    assert context_pack.main([str(path), "--offline", "--output", str(tmp_path / "x.md")]) == 1
    assert "neither meta.checkout nor meta.sources" in capsys.readouterr().err


def test_sources_only_says_what_was_not_possible(small_repo, tmp_path):
    root, base, head = small_repo
    document = pr_document(root, base, head, 7004, checkout=False)
    fetched = ["vllm/ops.py", "vllm/layers/new_name.py", "vllm/envs.py"]
    document["meta"]["sources"] = {"dir": str(root), "fetched": fetched, "skipped": ["vllm/nested.py"]}
    result = build_pack(document, None, SURFACE["context_pack"], SURFACE)
    assert result["meta"]["mode"] == "sources"
    assert "callers: no checkout at head" in result["meta"]["not_possible"]
    assert result["callers"] is None and result["ci_coverage"] is None
    assert {f["code"] for f in result["flags"]} == {"OP-ALIASING", "HOT-PATH-COPY", "ENV-UNREGISTERED"}


def test_bare_clone_works_like_the_work_tree(small_repo, tmp_path, pack):
    root, base, head = small_repo
    bare = tmp_path / "bare.git"
    import subprocess
    subprocess.run(["git", "clone", "-q", "--bare", str(root), str(bare)], check=True)
    document = pr_document(root, base, head, 7001)
    assert build_pack(document, str(bare), SURFACE["context_pack"], SURFACE)["flags"] == pack["flags"]


def test_repo_that_is_not_a_clone_is_one_line_error(small_pr_path, tmp_path, capsys):
    assert context_pack.main([str(small_pr_path), "--offline", "--repo", str(tmp_path), "--output", str(tmp_path / "x.md")]) == 1
    error = capsys.readouterr().err
    assert error.startswith(f"error: {tmp_path} is not a git clone; pass --repo") and error.count("\n") == 1


def test_max_lines_below_twenty_is_a_usage_error(small_pr_path, capsys):
    with pytest.raises(SystemExit) as stop:
        context_pack.main([str(small_pr_path), "--max-lines", "5"])
    assert stop.value.code == 2
    assert "must be at least 20" in capsys.readouterr().err
