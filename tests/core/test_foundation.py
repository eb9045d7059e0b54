"""The bundle's foundation: atomic writes, input files, dependencies and the surface file's schema."""

import os
import stat
import subprocess
import sys

import pytest
from conftest import SCRIPTS_DIR

from vllm_rocm_review.core.atomic_io import write_atomic
from vllm_rocm_review.core.cli import InputError
from vllm_rocm_review.core.cli import read_input_text
from vllm_rocm_review.core.surface import SurfaceError, load_surface, validate_surface


def test_write_atomic_replaces_content(tmp_path):
    target = tmp_path / "out.json"
    target.write_text("old")
    write_atomic(target, "new")
    assert target.read_text() == "new"
    assert [p.name for p in tmp_path.iterdir()] == ["out.json"]


def test_write_atomic_leaves_old_file_on_failure(tmp_path):
    target = tmp_path / "out.json"
    target.write_text("old")
    with pytest.raises(TypeError):
        write_atomic(target, 12345)
    assert target.read_text() == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["out.json"]


@pytest.fixture
def umask_022():
    previous = os.umask(0o022)
    yield
    os.umask(previous)


def test_write_atomic_gives_new_files_the_umask_mode(tmp_path, umask_022):
    write_atomic(tmp_path / "report.md", "text")
    assert stat.S_IMODE((tmp_path / "report.md").stat().st_mode) == 0o644


def test_write_atomic_private_files_are_for_the_owner_only(tmp_path, umask_022):
    write_atomic(tmp_path / "entry.json", "{}", private=True)
    assert stat.S_IMODE((tmp_path / "entry.json").stat().st_mode) == 0o600


def test_write_atomic_names_the_file_in_the_way_not_a_temporary_file(tmp_path):
    (tmp_path / "notes").write_text("x")
    with pytest.raises(NotADirectoryError) as caught:
        write_atomic(tmp_path / "notes" / "deeper" / "out.md", "text")
    assert caught.value.filename == str(tmp_path / "notes")
    assert caught.value.strerror == "is a file, not a directory"


def test_write_atomic_to_a_directory_names_it_and_leaves_no_temporary_file(tmp_path):
    (tmp_path / "outputs").mkdir()
    with pytest.raises(IsADirectoryError) as caught:
        write_atomic(tmp_path / "outputs", "text")
    assert caught.value.filename == str(tmp_path / "outputs")
    assert [p.name for p in tmp_path.iterdir()] == ["outputs"] and not list((tmp_path / "outputs").iterdir())


@pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="needs Linux /proc, a directory that takes no new files")
def test_write_atomic_failure_names_the_target_not_the_temporary_file():
    with pytest.raises(OSError) as caught:
        write_atomic("/proc/out.json", "text")
    assert caught.value.filename == "/proc/out.json"


def test_binary_input_is_one_line_with_a_remedy(tmp_path):
    binary = tmp_path / "pr.json"
    binary.write_bytes(b"PK\x03\x04\xff\xfe binary")
    with pytest.raises(InputError) as caught:
        read_input_text(binary, "PR JSON", "write it with scripts/fetch_pr_data.py")
    assert str(caught.value) == (
        f"cannot read PR JSON {binary}: not UTF-8 text (byte 0xff at offset 4: a binary file, or text in another "
        "encoding to convert with `iconv -t UTF-8`); write it with scripts/fetch_pr_data.py"
    )


@pytest.mark.parametrize("script", ["fetch_pr_data.py", "triage_pr.py", "check_report.py", "update_skill.py"])
def test_missing_runtime_packages_are_one_line_with_the_install_command(script):
    # -S leaves site-packages (requests, PyYAML, jinja2) off the path, as on a fresh Python.
    environment = {name: value for name, value in os.environ.items() if name != "PYTHONPATH"}
    done = subprocess.run([sys.executable, "-S", str(SCRIPTS_DIR / script), "--help"],
                          capture_output=True, text=True, env=environment, check=False)
    assert done.returncode == 1 and done.stdout == ""
    assert done.stderr == (
        f"error: missing Python package(s) requests, PyYAML, jinja2 for {sys.executable}; "
        f"install them with: {sys.executable} -m pip install requests PyYAML jinja2\n"
    )


def test_bundled_surface_passes_schema():
    surface = load_surface()
    assert {s["name"] for s in surface["upstream_sources"]} >= {"atom-review-pr-skill", "mori-structure"}


def test_schema_names_missing_keys():
    problems = validate_surface({"schema_version": 1})
    assert "missing top-level key 'markers'" in problems


def test_unparsable_surface_is_one_line_error(tmp_path):
    bad = tmp_path / "s.yaml"
    bad.write_text("a: [unclosed")
    with pytest.raises(SurfaceError) as info:
        load_surface(bad)
    assert "not valid YAML" in str(info.value)
    assert "\n" not in str(info.value) and "line 1" in str(info.value)
