"""The bundle's foundation: atomic writes and the surface file's schema."""

import pytest

from vllm_rocm_review.atomic_io import write_atomic
from vllm_rocm_review.surface import SurfaceError, load_surface, validate_surface


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
