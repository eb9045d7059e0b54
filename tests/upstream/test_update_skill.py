"""update_skill.py against a local GitHub replica serving the real upstream documents.

The replica serves ../shared/upstream (ATOM and aiter review skills, mori README and tree) and
the vLLM main tree from ../shared/vllm-tree through the contents, trees, branches and repo
endpoints. Every test works on a temporary copy of the skill directory and its own cache.
"""

import hashlib
import json
import shutil

import pytest
from conftest import ROOT
from conftest import shared_path
from github_replica import GitHubReplica
from replica_contents import ServedRepos
from vllm_tree import vllm_main_tree

import update_skill
from vllm_rocm_review.github.client import GitHubClient
from vllm_rocm_review.github.client import NetworkError
from vllm_rocm_review.github.client import RetryPolicy
from vllm_rocm_review.github.client import ServerError
from vllm_rocm_review.core.surface import is_glob
from vllm_rocm_review.core.surface import load_surface
from vllm_rocm_review.upstream.sources import load_sources
from vllm_rocm_review.upstream.sources import refresh_upstream

SKILL_DIR_IN_REPO = ".claude/skills/review-pr"
ATOM_SKILL = f"{SKILL_DIR_IN_REPO}/SKILL.md"
VLLM_COMMIT = "6adad08767583f52eb4d2122111af0bf638ed5e6"
CURATED = ("SKILL.md", "references/rocm-surface.yaml", "references/vllm-rocm-review-rules.md", "references/example-report.md")
RAW = "application/vnd.github.raw"
TEST_CATALOG = """# vLLM ROCm review rules (test copy)

<a id="changelog"></a>
## 更新日志

| Date | Sources | Change |
|---|---|---|
| 2026-08-01 | atom-review-pr-skill@43f61050, aiter-review-pr-skill@13ffa990 | first draft |
| 2026-08-23 | atom-review-pr-skill@728c3a3f, aiter-review-pr-skill@3fdb11af, mori-readme@2ab492a7, mori-structure@e1007bc3 | distilled |
"""


@pytest.fixture
def shared_docs():
    folder = shared_path("upstream")
    return {name: (folder / name).read_bytes() for name in (
        "atom-review-pr-skill.md", "aiter-review-pr-skill.md", "mori-readme.md", "mori-structure.json")}


@pytest.fixture(scope="module")
def vllm_tree():
    return vllm_main_tree()


@pytest.fixture
def skill(tmp_path):
    """A temporary skill bundle: the real surface YAML, SKILL.md and a test catalog of our own."""
    root = tmp_path / "skill"
    (root / "references" / "upstream").mkdir(parents=True)
    shutil.copy(ROOT / "references" / "rocm-surface.yaml", root / "references" / "rocm-surface.yaml")
    for name, fallback in (("SKILL.md", "# skill\n"), ("references/example-report.md", "# PR #1: example\n")):
        source = ROOT / name
        (root / name).write_bytes(source.read_bytes() if source.is_file() else fallback.encode())
    (root / "references" / "vllm-rocm-review-rules.md").write_text(TEST_CATALOG, encoding="utf-8")
    (root / "references" / "upstream" / ".gitkeep").write_bytes(b"")
    before = {name: _digest(root / name) for name in CURATED}
    yield root
    assert {name: _digest(root / name) for name in CURATED} == before, "a curated file was written"


@pytest.fixture
def upstream(httpserver, shared_docs, vllm_tree, monkeypatch, tmp_path):
    """The replica with ROCm/ATOM, ROCm/aiter, ROCm/mori and vllm-project/vllm."""
    monkeypatch.setenv("VLLM_ROCM_REVIEW_CACHE", str(tmp_path / "cache"))
    replica = GitHubReplica(httpserver)
    repos = ServedRepos(replica)
    repos.add("ROCm/ATOM").put_file(ATOM_SKILL, shared_docs["atom-review-pr-skill.md"])
    repos["ROCm/ATOM"].put_file("README.md", b"# ATOM\n")
    repos.add("ROCm/aiter").put_file(f"{SKILL_DIR_IN_REPO}/SKILL.md", shared_docs["aiter-review-pr-skill.md"])
    mori = repos.add("ROCm/mori")
    mori.load_tree(json.loads(shared_docs["mori-structure.json"]))
    mori.provide_bytes("README.md", shared_docs["mori-readme.md"])
    repos.add("vllm-project/vllm", commit_sha=VLLM_COMMIT).load_tree(vllm_tree)
    replica.repos = repos
    return replica


def run(skill, replica, *extra):
    return update_skill.main(["--skill-dir", str(skill), "--api-url", replica.api_url, "--token", "test-token", *extra])


def stdout_lines(capsys):
    return capsys.readouterr().out.splitlines()


def snapshot(folder):
    """Every file under ``folder`` with its bytes and mtime."""
    return {
        str(path.relative_to(folder)): (path.read_bytes(), path.stat().st_mtime_ns)
        for path in sorted(folder.rglob("*")) if path.is_file()
    }


def metadata(skill):
    return json.loads((skill / "references/upstream/.update-metadata.json").read_text(encoding="utf-8"))


def _digest(path):
    return hashlib.sha256(path.read_bytes()).hexdigest() if path.exists() else None


# --- the refresh ------------------------------------------------------------------------------


def test_first_run_writes_every_source_with_metadata(skill, upstream, shared_docs, capsys):
    assert run(skill, upstream) == 0
    lines = stdout_lines(capsys)
    assert lines[:6] == [
        "updated atom-review-pr-skill none→728c3a3f (+582/−0 lines)",
        "updated aiter-review-pr-skill none→3fdb11af (+632/−0 lines)",
        "absent aiter-review-pr-rules (optional)",
        "absent aiter-review-pr-mapping (optional)",
        "updated mori-readme none→2ab492a7 (+331/−0 lines)",
        "updated mori-structure none→e1007bc3 (+1130/−0 lines)",
    ]
    assert lines[-1] == (
        "curated at: aiter-review-pr-skill@3fdb11af, atom-review-pr-skill@728c3a3f, mori-readme@2ab492a7, "
        "mori-structure@e1007bc3; upstream now: aiter-review-pr-skill@3fdb11af, atom-review-pr-skill@728c3a3f, "
        "mori-readme@2ab492a7, mori-structure@e1007bc3; changed since curation: none"
    )
    folder = skill / "references" / "upstream"
    for name, data in shared_docs.items():
        assert (folder / name).read_bytes() == data, name  # the tree too: same shape, no url fields
    meta = metadata(skill)
    atom = meta["sources"]["atom-review-pr-skill"]
    assert atom == {
        "repo": "ROCm/ATOM", "path": ATOM_SKILL, "ref": None, "kind": "file", "target": "atom-review-pr-skill.md",
        "sha": "728c3a3fa18e713c5b67fc4a5ff467d176282f75", "previous_sha": None, "bytes": 50096,
        "fetched_at": meta["fetched_at"],
    }
    tree = meta["sources"]["mori-structure"]
    assert (tree["sha"], tree["bytes"], tree["branch"]) == ("e1007bc371b77c8d4d5c819e475e28b2c2143810", 190769, "main")
    assert tree["commit_sha"] == upstream.repos["ROCm/mori"].commit_sha
    assert set(meta["sources"]) == {"atom-review-pr-skill", "aiter-review-pr-skill", "mori-readme", "mori-structure"}


def test_second_run_writes_nothing_downloads_nothing_and_costs_no_units(skill, upstream, capsys):
    run(skill, upstream)
    capsys.readouterr()
    before = snapshot(skill)
    first_run_requests = len(upstream.log)
    assert run(skill, upstream) == 0
    captured = capsys.readouterr()
    assert snapshot(skill) == before
    second = upstream.log[first_run_requests:]
    assert [entry for entry in second if RAW in entry.accept or "/git/trees/" in entry.path] == []
    assert {entry.status for entry in second} == {304}
    # ATOM folder, aiter folder, mori root folder, mori branch (default branch remembered)
    assert "requests: 4 (0 rate-limit units, 4 answered 304 from the cache)" in captured.err
    assert captured.out.splitlines()[:6] == [
        "unchanged atom-review-pr-skill",
        "unchanged aiter-review-pr-skill",
        "absent aiter-review-pr-rules (optional)",
        "absent aiter-review-pr-mapping (optional)",
        "unchanged mori-readme",
        "unchanged mori-structure",
    ]


def test_without_the_cache_the_sha_skip_still_downloads_nothing(skill, upstream, tmp_path, monkeypatch, capsys):
    run(skill, upstream)
    before = snapshot(skill)
    monkeypatch.setenv("VLLM_ROCM_REVIEW_CACHE", str(tmp_path / "empty-cache"))
    seen = len(upstream.log)
    assert run(skill, upstream) == 0
    assert snapshot(skill) == before
    assert [entry for entry in upstream.log[seen:] if RAW in entry.accept or "/git/trees/" in entry.path] == []


def test_changed_document_is_updated_with_previous_copy_and_diff(skill, upstream, shared_docs, capsys):
    run(skill, upstream)
    capsys.readouterr()
    before = snapshot(skill)
    old = shared_docs["atom-review-pr-skill.md"]
    new = old.replace(b"\n", b"\nAn added upstream line.\n", 1)
    upstream.repos["ROCm/ATOM"].put_file(ATOM_SKILL, new)
    new_sha = hashlib.sha1(b"blob %d\0" % len(new) + new).hexdigest()
    assert run(skill, upstream) == 0
    lines = stdout_lines(capsys)
    assert lines[0] == f"updated atom-review-pr-skill 728c3a3f→{new_sha[:8]} (+1/−0 lines)"
    assert lines[1:6] == [
        "unchanged aiter-review-pr-skill", "absent aiter-review-pr-rules (optional)",
        "absent aiter-review-pr-mapping (optional)", "unchanged mori-readme", "unchanged mori-structure",
    ]
    assert "diff: references/upstream/.previous/atom-review-pr-skill.diff" in lines
    assert lines[-1].endswith("changed since curation: atom-review-pr-skill")
    folder = skill / "references" / "upstream"
    assert (folder / "atom-review-pr-skill.md").read_bytes() == new
    assert (folder / ".previous" / "atom-review-pr-skill.md").read_bytes() == old
    diff = (folder / ".previous" / "atom-review-pr-skill.diff").read_text(encoding="utf-8")
    assert "\n+An added upstream line.\n" in diff and diff.startswith("--- a/atom-review-pr-skill.md (728c3a3f)")
    entry = metadata(skill)["sources"]["atom-review-pr-skill"]
    assert (entry["sha"], entry["previous_sha"]) == (new_sha, "728c3a3fa18e713c5b67fc4a5ff467d176282f75")
    after = snapshot(skill)
    for name in ("aiter-review-pr-skill.md", "mori-readme.md", "mori-structure.json"):
        key = f"references/upstream/{name}"
        assert after[key] == before[key], name


def test_optional_source_appearing_upstream_is_downloaded(skill, upstream, capsys):
    run(skill, upstream)
    capsys.readouterr()
    rules = "# Rules\n\n## A1 sibling variants\nWritten for this test.\n".encode()
    upstream.repos["ROCm/aiter"].put_file(f"{SKILL_DIR_IN_REPO}/rules.md", rules)
    seen = len(upstream.log)
    assert run(skill, upstream) == 0
    lines = stdout_lines(capsys)
    assert lines[2].startswith("updated aiter-review-pr-rules none→") and lines[2].endswith("(+4/−0 lines)")
    assert lines[1] == "unchanged aiter-review-pr-skill"
    assert (skill / "references/upstream/aiter-review-pr-rules.md").read_bytes() == rules
    raw_downloads = [entry.path for entry in upstream.log[seen:] if RAW in entry.accept]
    assert raw_downloads == [f"/repos/ROCm/aiter/contents/{SKILL_DIR_IN_REPO}/rules.md"]
    assert "aiter-review-pr-rules" in lines[-1].rsplit("changed since curation:", 1)[1]


def test_vanished_required_source_is_reported_and_old_copy_kept(skill, upstream, capsys):
    run(skill, upstream)
    capsys.readouterr()
    before = snapshot(skill)
    upstream.repos["ROCm/ATOM"].remove_file(ATOM_SKILL)
    assert run(skill, upstream) == 3
    lines = stdout_lines(capsys)
    assert lines[0] == "missing atom-review-pr-skill (kept old copy)"
    assert snapshot(skill) == before  # old copy and metadata untouched
    assert "changed since curation: atom-review-pr-skill" in lines[-1]


def test_vanished_folder_counts_as_missing_for_each_file(skill, upstream, capsys):
    run(skill, upstream)
    capsys.readouterr()
    upstream.repos["ROCm/aiter"].remove_file(f"{SKILL_DIR_IN_REPO}/SKILL.md")
    assert run(skill, upstream) == 3
    lines = stdout_lines(capsys)
    assert lines[1:4] == [
        "missing aiter-review-pr-skill (kept old copy)",
        "absent aiter-review-pr-rules (optional)",
        "absent aiter-review-pr-mapping (optional)",
    ]


@pytest.mark.parametrize("fault", ["dropped connection", "500"])
def test_failure_on_third_download_leaves_everything_old(skill, upstream, fault):
    run(skill, upstream)
    before = snapshot(skill)
    seen = len(upstream.log)
    upstream.repos["ROCm/ATOM"].put_file(ATOM_SKILL, b"new atom\n")
    upstream.repos["ROCm/aiter"].put_file(f"{SKILL_DIR_IN_REPO}/SKILL.md", b"new aiter\n")
    upstream.repos["ROCm/mori"].put_file("README.md", b"new mori\n")
    if fault == "500":
        upstream.fail("GET", r"/repos/ROCm/mori/contents/README\.md", 500, times=None)
    else:
        upstream.drop_connection(r"/repos/ROCm/mori/contents/README\.md", times=None)
    # The CLI's client would back off for real; this one retries at once (same policy shape).
    client = GitHubClient(upstream.api_url, "test-token", use_cache=False, sleep=lambda seconds: None,
                          retry=RetryPolicy(max_retries=2))
    sources = load_sources(load_surface(skill / "references" / "rocm-surface.yaml"))
    with pytest.raises(NetworkError if fault != "500" else ServerError):
        refresh_upstream(client, skill / "references" / "upstream", sources, now="2026-09-01T00:00:00Z")
    assert snapshot(skill) == before
    downloads = [entry.path for entry in upstream.log[seen:] if RAW in entry.accept]
    assert downloads[:2] == [f"/repos/ROCm/ATOM/contents/{ATOM_SKILL}", f"/repos/ROCm/aiter/contents/{SKILL_DIR_IN_REPO}/SKILL.md"]
    assert downloads[2:] == ["/repos/ROCm/mori/contents/README.md"] * 3  # first try + 2 retries


def test_server_error_on_first_run_writes_nothing_and_exits_1(skill, upstream, capsys):
    upstream.fail("GET", r"/repos/ROCm/mori/contents/README\.md", 403, {"message": "Resource not accessible"})
    assert run(skill, upstream) == 1
    captured = capsys.readouterr()
    errors = [line for line in captured.err.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and "403" in errors[0]
    assert sorted(p.name for p in (skill / "references" / "upstream").iterdir()) == [".gitkeep"]


@pytest.mark.parametrize("blocked", [".previous/aiter-review-pr-skill.md", "aiter-review-pr-skill.md"])
def test_failure_while_writing_keeps_metadata_in_step_with_the_files(skill, upstream, blocked, capsys):
    """The 2nd source cannot be written (a folder sits where a file must go): the 1st stays new."""
    run(skill, upstream)
    capsys.readouterr()
    folder = skill / "references" / "upstream"
    old_aiter = (folder / "aiter-review-pr-skill.md").read_bytes()
    upstream.repos["ROCm/ATOM"].put_file(ATOM_SKILL, b"new atom\n")
    upstream.repos["ROCm/aiter"].put_file(f"{SKILL_DIR_IN_REPO}/SKILL.md", b"new aiter\n")
    (folder / blocked).unlink(missing_ok=True)
    (folder / blocked / "occupied").mkdir(parents=True)
    assert run(skill, upstream) == 1
    assert len([line for line in capsys.readouterr().err.splitlines() if line.startswith("error:")]) == 1
    sources = metadata(skill)["sources"]
    assert (folder / "atom-review-pr-skill.md").read_bytes() == b"new atom\n"
    assert sources["atom-review-pr-skill"]["sha"] == hashlib.sha1(b"blob 9\0new atom\n").hexdigest()
    assert sources["aiter-review-pr-skill"]["sha"] == "3fdb11afac0e1d6bb6c5c44fe13855f427f9e6f5"
    if blocked.startswith(".previous"):
        assert (folder / "aiter-review-pr-skill.md").read_bytes() == old_aiter
    assert not [p for p in folder.rglob("*.tmp")]


def test_dry_run_writes_nothing_and_says_would_update(skill, upstream, capsys):
    assert run(skill, upstream, "--dry-run", "--check-vllm-tree") in (0, 3)
    captured = capsys.readouterr()
    lines = captured.out.splitlines()
    assert lines[:6] == [
        "would update atom-review-pr-skill none→728c3a3f (+582/−0 lines)",
        "would update aiter-review-pr-skill none→3fdb11af (+632/−0 lines)",
        "absent aiter-review-pr-rules (optional)",
        "absent aiter-review-pr-mapping (optional)",
        "would update mori-readme none→2ab492a7 (+331/−0 lines)",
        "would update mori-structure none→e1007bc3 (+1130/−0 lines)",
    ]
    assert not [line for line in lines if line.startswith(("updated ", "diff:"))]
    assert not [line for line in captured.err.splitlines() if line.startswith("saved ")]
    assert sorted(p.name for p in (skill / "references" / "upstream").iterdir()) == [".gitkeep"]


def test_dry_run_after_an_upstream_change_names_no_diff_file(skill, upstream, shared_docs, capsys):
    run(skill, upstream)
    capsys.readouterr()
    before = snapshot(skill)
    new = shared_docs["atom-review-pr-skill.md"] + b"One more upstream line.\n"
    upstream.repos["ROCm/ATOM"].put_file(ATOM_SKILL, new)
    new_sha = hashlib.sha1(b"blob %d\0" % len(new) + new).hexdigest()
    assert run(skill, upstream, "--dry-run") == 0
    lines = stdout_lines(capsys)
    assert lines[0] == f"would update atom-review-pr-skill 728c3a3f→{new_sha[:8]} (+1/−0 lines)"
    assert not [line for line in lines if line.startswith("diff:") or ".previous" in line]
    assert lines[-1].endswith("changed since curation: atom-review-pr-skill")
    assert snapshot(skill) == before


def test_force_downloads_again_and_rewrites(skill, upstream, capsys):
    run(skill, upstream)
    capsys.readouterr()
    before = snapshot(skill)
    seen = len(upstream.log)
    assert run(skill, upstream, "--force") == 0
    lines = stdout_lines(capsys)
    assert lines[0] == "updated atom-review-pr-skill 728c3a3f→728c3a3f (+0/−0 lines)"
    forced = upstream.log[seen:]
    assert len([entry for entry in forced if RAW in entry.accept]) == 3
    assert len([entry for entry in forced if "/git/trees/" in entry.path]) == 1
    after = snapshot(skill)
    for name in ("atom-review-pr-skill.md", "mori-structure.json"):
        key = f"references/upstream/{name}"
        assert after[key][0] == before[key][0] and after[key][1] != before[key][1]


def test_renamed_default_branch_is_looked_up_again(skill, upstream, capsys):
    run(skill, upstream)
    capsys.readouterr()
    upstream.repos["ROCm/mori"].default_branch = "trunk"
    upstream.repos["ROCm/mori"].put_file("NEWS.md", b"news\n")
    assert run(skill, upstream) == 0
    assert "updated mori-structure e1007bc3→" in "\n".join(stdout_lines(capsys))
    assert metadata(skill)["sources"]["mori-structure"]["branch"] == "trunk"
    assert [entry.status for entry in upstream.seen(r"/repos/ROCm/mori(/branches/.*)?")][-3:] == [404, 200, 200]


def test_local_copy_edited_by_hand_is_restored(skill, upstream, shared_docs, capsys):
    run(skill, upstream)
    capsys.readouterr()
    target = skill / "references" / "upstream" / "mori-readme.md"
    target.write_bytes(b"edited locally\n")
    assert run(skill, upstream) == 0
    edited_sha = hashlib.sha1(b"blob 15\0edited locally\n").hexdigest()
    assert f"updated mori-readme {edited_sha[:8]}→2ab492a7 (+331/−1 lines)" in stdout_lines(capsys)
    assert target.read_bytes() == shared_docs["mori-readme.md"]


def test_bad_token_is_one_line_naming_its_source(skill, httpserver, monkeypatch, tmp_path, capsys):
    monkeypatch.setenv("VLLM_ROCM_REVIEW_CACHE", str(tmp_path / "cache"))
    replica = GitHubReplica(httpserver, tokens={"good"})
    assert run(skill, replica) == 1
    errors = [line for line in capsys.readouterr().err.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and "401" in errors[0] and errors[0].endswith("(token from --token)")


def test_unknown_skill_dir_is_a_usage_error(tmp_path, capsys):
    assert update_skill.main(["--skill-dir", str(tmp_path)]) == 2
    assert "rocm-surface.yaml not found" in capsys.readouterr().err


# --- the vLLM tree tripwire -------------------------------------------------------------------


def _surface_checks(skill):
    from vllm_rocm_review.upstream.tree_check import surface_path_checks

    return surface_path_checks(load_surface(skill / "references" / "rocm-surface.yaml"))


def tree_lines(lines):
    tags = ("OK ", "MOVED ", "MISSING ", "OLD-ABSENT ", "REAPPEARED ")
    return [line for line in lines if line.startswith(tags)]


def test_tree_check_on_real_tree_is_all_ok_and_saves_paths(skill, upstream, vllm_tree, capsys):
    checks = _surface_checks(skill)
    if not checks:
        pytest.skip("references/rocm-surface.yaml names no vLLM paths yet")
    assert run(skill, upstream, "--check-vllm-tree") == 0
    captured = capsys.readouterr()
    lines = tree_lines(captured.out.splitlines())
    assert len(lines) == len(checks)
    old_count = sum(1 for _path, old in checks if old)
    ok_count = len(checks) - old_count
    assert [line.split(" ", 1)[0] for line in lines] == ["OK"] * ok_count + ["OLD-ABSENT"] * old_count
    assert captured.err.splitlines()[-1] == (
        f"vllm tree @{VLLM_COMMIT[:8]}: {ok_count} OK, 0 MOVED, 0 MISSING; {old_count} old locations absent (downloaded)"
    )
    assert not [line for line in captured.out.splitlines() if line.startswith("vllm tree @")]  # stdout is data only
    saved = json.loads((skill / "references/upstream/vllm-tree.json").read_text(encoding="utf-8"))
    assert (saved["repo"], saved["ref"], saved["commit_sha"]) == ("vllm-project/vllm", "main", VLLM_COMMIT)
    assert saved["tree_sha"] == vllm_tree["sha"]
    assert saved["paths"] == [entry["path"] for entry in vllm_tree["tree"]]


def test_unchanged_vllm_tree_is_not_downloaded_again(skill, upstream, capsys):
    run(skill, upstream, "--check-vllm-tree")
    capsys.readouterr()
    before = snapshot(skill)
    seen = len(upstream.log)
    run(skill, upstream, "--check-vllm-tree")
    assert snapshot(skill) == before
    assert [entry for entry in upstream.log[seen:] if "/git/trees/" in entry.path] == []
    last = capsys.readouterr().err.splitlines()[-1]
    assert last.startswith(f"vllm tree @{VLLM_COMMIT[:8]}: ") and last.endswith("(saved copy)")


def _two_unique_files(checks, tree):
    """Two checked blob paths whose file names occur once in vLLM and that no glob or folder needs."""
    blobs = [entry["path"] for entry in tree["tree"] if entry["type"] == "blob"]
    names = {}
    for path in blobs:
        names[path.rsplit("/", 1)[-1]] = names.get(path.rsplit("/", 1)[-1], 0) + 1
    checked = {path for path, old in checks}
    folders = {path for path in checked if not is_glob(path)} - set(blobs)
    blob_set = set(blobs)
    picked = []
    for path, old in checks:
        if old or path not in blob_set or names[path.rsplit("/", 1)[-1]] != 1:
            continue
        if any(path.startswith(folder + "/") for folder in folders):
            continue
        picked.append(path)
    return picked[:2]


def test_renamed_and_deleted_files_are_moved_and_missing(skill, upstream, vllm_tree, capsys):
    picked = _two_unique_files(_surface_checks(skill), vllm_tree)
    if len(picked) < 2:
        pytest.skip("the surface names fewer than two vLLM files with a unique name")
    moved, deleted = picked
    folder, name = moved.rsplit("/", 1)
    new_home = f"{folder}/relocated/{name}"
    vllm = upstream.repos["vllm-project/vllm"]
    vllm.move(moved, new_home)
    vllm.remove_file(deleted)
    assert run(skill, upstream, "--check-vllm-tree") == 3
    captured = capsys.readouterr()
    lines = tree_lines(captured.out.splitlines())
    checks = _surface_checks(skill)
    old_count = sum(1 for _path, old in checks if old)
    ok_count = len(checks) - old_count - 2
    assert lines[:2] == [f"MOVED {moved} -> {new_home}", f"MISSING {deleted}"]  # drift above everything else
    assert [line.split(" ", 1)[0] for line in lines[2:]] == ["OK"] * ok_count + ["OLD-ABSENT"] * old_count
    assert captured.err.splitlines()[-1].startswith(
        f"vllm tree @{vllm.commit_sha[:8]}: {ok_count} OK, 1 MOVED, 1 MISSING; {old_count} old locations absent")
    saved = json.loads((skill / "references/upstream/vllm-tree.json").read_text(encoding="utf-8"))
    assert new_home in saved["paths"] and deleted not in saved["paths"] and saved["commit_sha"] == vllm.commit_sha


def test_truncated_tree_falls_back_to_subtrees(skill, upstream, vllm_tree, capsys):
    upstream.repos["vllm-project/vllm"].max_tree_entries = 1500
    assert run(skill, upstream, "--check-vllm-tree") == 0
    saved = json.loads((skill / "references/upstream/vllm-tree.json").read_text(encoding="utf-8"))
    assert saved["paths"] == [entry["path"] for entry in vllm_tree["tree"]]
    tree_requests = upstream.seen(r"/repos/vllm-project/vllm/git/trees/.*")
    assert len(tree_requests) > 2
    assert any("recursive" not in entry.query for entry in tree_requests)


def test_old_location_reappearing_is_drift(skill, upstream, capsys):
    surface_file = skill / "references" / "rocm-surface.yaml"
    surface = load_surface(surface_file)
    old = [entry for entry in surface["known_paths"] if entry.get("old") and not is_glob(entry["path"])]
    if not old:
        pytest.skip("the surface marks no old vLLM location")
    path = old[0]["path"]
    upstream.repos["vllm-project/vllm"].put_file(path, b"# back again\n")
    assert run(skill, upstream, "--check-vllm-tree") == 3
    captured = capsys.readouterr()
    lines = tree_lines(captured.out.splitlines())
    assert lines[0] == f"REAPPEARED {path}"
    assert "OK" == lines[1].split(" ", 1)[0]
    assert ", 1 REAPPEARED" in captured.err.splitlines()[-1]
