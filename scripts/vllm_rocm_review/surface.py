"""Load and validate references/rocm-surface.yaml, the single source of machine-readable facts."""

from pathlib import Path

import yaml

from .skill_paths import SURFACE_YAML

TOP_LEVEL_TYPES = {
    "schema_version": int,
    "markers": dict,
    "known_paths": list,
    "shared_surface": list,
    "backbone_tiers": list,
    "tuning_configs": dict,
    "pr_types": list,
    "judgment_rules": list,
    "diff_families": list,
    "checks": dict,
    "mori_api": dict,
    "upstream_sources": list,
}

UPSTREAM_SOURCE_KEYS = {"name", "repo", "path", "ref", "kind", "target", "optional"}


class SurfaceError(ValueError):
    """The surface file is missing, unparsable or does not match its schema."""


def load_surface(path=SURFACE_YAML):
    """Parse and validate the surface file; raise SurfaceError naming the first problem."""
    path = Path(path)
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise SurfaceError(f"{path}: not found") from None
    except yaml.YAMLError as exc:
        raise SurfaceError(f"{path}: not valid YAML ({exc})") from None
    problems = validate_surface(data)
    if problems:
        raise SurfaceError(f"{path}: {problems[0]}")
    return data


def validate_surface(data):
    """Return a list of schema problems, empty when the document is valid."""
    if not isinstance(data, dict):
        return ["top level must be a mapping"]
    problems = []
    for key, expected in TOP_LEVEL_TYPES.items():
        if key not in data:
            problems.append(f"missing top-level key {key!r}")
        elif not isinstance(data[key], expected):
            problems.append(f"{key!r} must be a {expected.__name__}")
    problems.extend(_validate_upstream_sources(data.get("upstream_sources") or []))
    return problems


def _validate_upstream_sources(sources):
    problems = []
    names = set()
    for index, source in enumerate(sources):
        where = f"upstream_sources[{index}]"
        if not isinstance(source, dict):
            problems.append(f"{where} must be a mapping")
            continue
        missing = UPSTREAM_SOURCE_KEYS - source.keys()
        if missing:
            problems.append(f"{where} lacks {', '.join(sorted(missing))}")
            continue
        if source["kind"] not in ("file", "tree"):
            problems.append(f"{where}.kind must be 'file' or 'tree'")
        if source["name"] in names:
            problems.append(f"{where}.name {source['name']!r} is repeated")
        names.add(source["name"])
        if "/" in source["target"] or source["target"].startswith("."):
            problems.append(f"{where}.target must be a plain file name")
    return problems
