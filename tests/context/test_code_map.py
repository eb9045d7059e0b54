"""The code map (pr-N-code.md) over repositories the test builds: what each block shows, the cap, the CLI."""

import json
import os
import textwrap

import pytest

import context_pack
from context_repo import commit
from context_repo import small_pr_path  # noqa: F401  (fixtures)
from context_repo import small_repo  # noqa: F401
from context_repo import write_files
from git_pr import git
from git_pr import pr_document
from vllm_rocm_review.context.code_map import CodeMap
from vllm_rocm_review.context.pack import build_pack
from vllm_rocm_review.context.pack import open_workspace
from vllm_rocm_review.core.surface import load_surface

SURFACE = load_surface()


def build(document, max_lines=2500):
    code_map = CodeMap("out/pr-7001-code.md", max_lines)
    pack = build_pack(document, None, SURFACE["context_pack"], SURFACE, None, code_map)
    return pack, code_map.text


def block(text, title):
    """The lines of the block whose heading (``###``, ``####`` for twins) starts with ``title``."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("###") and line.lstrip("#").startswith(f" {title}"))
    end = next((i for i in range(start + 1, len(lines)) if lines[i].startswith(("## ", "### ", "#### "))), len(lines))
    return "\n".join(lines[start:end])


@pytest.fixture(scope="module")
def mapped(small_repo):
    root, base, head = small_repo
    return build(pr_document(root, base, head, 7001))


def test_a_modified_definition_shows_head_and_base(mapped):
    text = block(mapped[1], "Layer._compute")
    assert "[function, modified] vllm/layers/new_name.py:8-11" in text
    assert "    9          weight = self.weight.contiguous()" in text
    assert "base (vllm/layers/old_name.py:8):" in text and "    9          return x * 2" in text


def test_an_added_definition_shows_head_only(mapped):
    text = block(mapped[1], "scale_in_place")
    assert "[function, added]" in text and "    6      return x[:, :1]" in text
    assert "base" not in text


def test_callers_appear_as_path_line_and_text(mapped):
    assert "- vllm/user.py:8  return Outer.Inner().method(1)" in block(mapped[1], "Outer.Inner.method")
    assert "callers of use: none at head" in block(mapped[1], "use ")


def test_twins_follow_their_definition_as_text(mapped):
    text = mapped[1]
    twins = block(text, "twins of AlphaBackend.get_kv_cache_shape")
    assert "attention-backends: vllm/v1/attention/backends/gamma.py:2-4" in twins
    assert "    4          return (num_blocks, 2, block_size)" in twins
    assert text.index("### AlphaBackend.get_kv_cache_shape") < text.index("#### twins of AlphaBackend")


def test_yaml_hunks_and_module_level_python_hunks(mapped):
    yaml = block(mapped[1], ".buildkite/test-amd.yaml hunks")
    assert "    5 +   source_file_dependencies:" in yaml and "    4     working_dir:" in yaml
    module = block(mapped[1], "vllm/user.py hunks")
    assert "    1 + from vllm import envs" in module
    assert "… use: its own block" in module and "envs.VLLM_NOT_THERE" not in module
    envs = block(mapped[1], "vllm/envs.py hunks")
    assert '      -     VLLM_OLD_KNOB: int = 4' in envs


def test_the_pack_records_the_map(mapped):
    pack, text = mapped
    summary = pack["code_map"]
    assert summary["path"] == "out/pr-7001-code.md" and summary["cut"] == []
    assert summary["lines"] == len(text.splitlines()) and summary["definitions"] == text.count("\n### ") - summary["hunks"]
    assert summary["missing"] == ["pinned upstream definitions (section 5 not collected)"]


def test_the_cap_cuts_whole_blocks_tests_first_and_names_them(small_repo):
    root, base, head = small_repo
    pack, text = build(pr_document(root, base, head, 7001), max_lines=60)
    cut = pack["code_map"]["cut"]
    assert len(text.splitlines()) <= 60
    assert f"\ncut to fit 60 lines: {len(cut)} block(s) of {sum(c['lines'] for c in cut)} lines" in text
    names = {(c["path"], c["name"]) for c in cut}
    assert {("tests/kernels/test_alpha.py", "test_alpha"), ("tests/misc/test_orphan.py", "test_orphan")} <= names
    for path, name in names:
        assert f"### {name}" not in text and f"#### {name}" not in text
        assert name in next(line for line in text.splitlines() if line.startswith(f"- {path}: "))
    assert "### Layer._compute" in text  # a product definition outranks every test


def long_function(value):
    body = "".join(f"    step_{n} = {n}\n" for n in range(40))
    return f"def long_one(x):\n    x = {value}\n{body}    return x\n\n\ndef short_one(y):\n    return y + {value}\n"


def test_a_long_base_is_a_diff_with_file_line_numbers_and_a_short_one_is_whole(tmp_path):
    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q")
    write_files(root, {"vllm/padding.py": "# header\n\n" + long_function(1)})
    base = commit(root, "base")
    write_files(root, {"vllm/padding.py": "# header\n\n" + long_function(2)})
    head = commit(root, "head")
    _, text = build(pr_document(root, base, head, 7001))
    long_block = block(text, "long_one")
    assert "base→head diff (43 lines at base, file line numbers):" in long_block
    assert "@@ -3,5 +3,5 @@" in long_block and "-    x = 1" in long_block and "+    x = 2" in long_block
    assert "step_30" not in long_block.split("```diff")[1]
    assert "base (vllm/padding.py:48):" in block(text, "short_one")


def long_class(limit, extra_method):
    methods = "".join(f"    def method_{n}(self):\n        return {n}\n\n" for n in range(20))
    extra = "    def added(self):\n        return 0\n\n" if extra_method else ""
    return f"class Big:\n    LIMIT = {limit}\n\n{extra}{methods}"


def test_a_long_class_shows_only_its_outline_diff(tmp_path):
    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q")
    write_files(root, {"vllm/big.py": long_class(1, False)})
    base = commit(root, "base")
    write_files(root, {"vllm/big.py": long_class(2, True)})
    head = commit(root, "head")
    _, text = build(pr_document(root, base, head, 7001))
    outline = block(text, "Big [class, modified]")
    assert "class outline, base→head diff" in outline and "-    LIMIT = 1\n+    LIMIT = 2" in outline
    assert "+    def added(self): …\n" in outline and "# lines" not in outline and "method_19" not in outline
    assert "    5          return 0" in block(text, "Big.added [function, added]")


def test_a_changed_closure_is_shown_inside_its_changed_function(tmp_path):
    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q")
    closure = "def outer(x):\n    y = {0}\n\n    def inner(z):\n        return z * {0}\n\n    return inner(x + y)\n"
    write_files(root, {"vllm/closure.py": closure.format(1)})
    base = commit(root, "base")
    write_files(root, {"vllm/closure.py": closure.format(2)})
    head = commit(root, "head")
    pack, text = build(pr_document(root, base, head, 7001))
    assert {s["qualname"] for s in pack["symbols"]} == {"outer", "outer.inner"}
    assert "    5          return z * 2" in block(text, "outer [function, modified]")
    assert "### outer.inner" not in text and pack["code_map"]["definitions"] == 1


def test_sources_only_maps_what_it_can_and_says_what_is_missing(small_repo):
    root, base, head = small_repo
    document = pr_document(root, base, head, 7004, checkout=False)
    fetched = ["vllm/ops.py", "vllm/layers/new_name.py", "vllm/envs.py"]
    document["meta"]["sources"] = {"dir": str(root), "fetched": fetched, "skipped": ["vllm/nested.py"]}
    pack, text = build(document)
    assert "    8      return x.view(-1)" in block(text, "my_op_impl [function, changed, base unknown]")
    assert "missing: callers (no checkout at head)" in text
    assert "missing: definitions of vllm/nested.py: no head text (not downloaded); its hunks are shown instead" in text
    assert "+             return a + b" in block(text, "vllm/nested.py hunks")
    assert "callers of" not in text and "twins of" not in text
    assert pack["code_map"]["missing"][0].startswith("base text and base→head diffs")


def test_platform_twins_of_another_section_are_shown_when_present(small_repo):
    root, base, head = small_repo
    document = pr_document(root, base, head, 7001)
    pack = build_pack(document, None, SURFACE["context_pack"], SURFACE)
    pack["platform_twins"] = [{"method": "use", "rocm": "vllm/user.py:5", "cuda": "vllm/ops.py:11-12"}]
    ws, _, _ = open_workspace(document, None, SURFACE["context_pack"], SURFACE)
    ws.load_python()
    code_map = CodeMap("pr-7001-code.md", 2500)
    code_map.build(ws, pack)
    twins = block(code_map.text, "twins of use")
    assert "platform: vllm/ops.py:11-12" in twins and "   12      return torch.empty_like(x)" in twins


def upstream_symbol(called_at, saved):
    return {"repo": "ROCm/aiter", "ref": "v1", "symbol": "aiter.helper", "called_at": called_at, "via": None,
            "status": "found", "path": "aiter/ops/helper.py", "line": 4, "signature": "def helper(a)", "asserts": [],
            "constants": [], "saved": str(saved)}


def test_upstream_definitions_go_with_module_level_hunks_and_unsaved_ones_are_named(small_repo, tmp_path):
    root, base, head = small_repo
    document = pr_document(root, base, head, 7001)
    pack = build_pack(document, None, SURFACE["context_pack"], SURFACE)
    saved = tmp_path / "helper.py"
    saved.write_text("X = 1\n\n\n@cache\ndef helper(a):\n    return a\n")
    pack["upstream"] = {"symbols": [upstream_symbol("vllm/user.py:1", saved),
                                    upstream_symbol("vllm/ops.py:8", tmp_path / "gone.py")]}
    pack["upstream"]["symbols"][0]["line"] = 5
    ws, _, _ = open_workspace(document, None, SURFACE["context_pack"], SURFACE)
    ws.load_python()
    code_map = CodeMap("pr-7001-code.md", 2500)
    code_map.build(ws, pack)
    module = block(code_map.text, "vllm/user.py hunks")
    assert "upstream aiter.helper ← vllm/user.py:1: ROCm/aiter@v1:aiter/ops/helper.py:5" in module
    assert "    4  @cache\n    5  def helper(a):\n    6      return a" in module
    assert (f"upstream aiter.helper ← vllm/ops.py:8: ROCm/aiter@v1:aiter/ops/helper.py:4; text not saved "
            f"({tmp_path / 'gone.py'}); def helper(a)") in block(code_map.text, "my_op_impl")


def run_cli(pr_path, out, *extra):
    return context_pack.main([str(pr_path), "--offline", "--output", str(out / "pr-7001-context.md"), *extra])


def test_the_cli_writes_the_map_beside_the_digest(small_pr_path, tmp_path, capsys):
    out = tmp_path / "out"
    out.mkdir()
    assert run_cli(small_pr_path, out) == 0
    err = capsys.readouterr().err
    code_path = out / "pr-7001-code.md"
    assert f"and {code_path} (" in err
    assert sorted(os.listdir(out)) == ["pr-7001-code.md", "pr-7001-context.json", "pr-7001-context.md"]
    pack = json.loads((out / "pr-7001-context.json").read_text())
    assert pack["code_map"]["path"] == str(code_path)
    assert f"code map: {code_path} ({pack['code_map']['lines']} lines: " in (out / "pr-7001-context.md").read_text()
    assert code_path.read_text().startswith("# Code map for PR #7001: A change\n")


def test_the_cli_writes_nothing_when_the_map_cannot_be_written(small_pr_path, tmp_path, capsys):
    out = tmp_path / "out"
    (out / "pr-7001-code.md").mkdir(parents=True)
    assert run_cli(small_pr_path, out) == 1
    assert capsys.readouterr().err.startswith("error: ")
    assert sorted(os.listdir(out)) == ["pr-7001-code.md"]


def test_zero_code_map_lines_writes_no_map(small_pr_path, tmp_path, capsys):
    assert run_cli(small_pr_path, tmp_path, "--code-map-lines", "0") == 0
    assert "code.md" not in capsys.readouterr().err and not (tmp_path / "pr-7001-code.md").exists()
    assert json.loads((tmp_path / "pr-7001-context.json").read_text())["code_map"] == {"status": "not built"}


def test_a_tiny_code_map_cap_is_a_usage_error(small_pr_path, tmp_path, capsys):
    with pytest.raises(SystemExit) as stop:
        run_cli(small_pr_path, tmp_path, "--code-map-lines", "10")
    assert stop.value.code == 2
    assert "must be 0 (no code map) or at least 50" in capsys.readouterr().err


def test_a_cpp_file_is_mapped_by_hunks_with_head_context(tmp_path):
    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q")
    kernel = "".join(f"int line_{n} = {n};\n" for n in range(1, 31))
    write_files(root, {"csrc/kernel.cu": kernel, "docs/notes.md": "a\n"})
    base = commit(root, "base")
    write_files(root, {"csrc/kernel.cu": kernel.replace("line_15 = 15", "line_15 = 51"), "docs/notes.md": "b\n"})
    head = commit(root, "head")
    pack, text = build(pr_document(root, base, head, 7001))
    hunk = block(text, "csrc/kernel.cu hunks 4-26")
    assert "```cuda" in hunk and "   15 + int line_15 = 51;" in hunk and "      - int line_15 = 15;" in hunk
    assert "    4   int line_4 = 4;" in hunk and "line_3 =" not in hunk
    assert pack["code_map"]["not_mapped"] == ["docs/notes.md"]
    assert textwrap.dedent("not mapped (neither Python nor a context_pack.code_map.hunk_globs file): docs/notes.md") in text
