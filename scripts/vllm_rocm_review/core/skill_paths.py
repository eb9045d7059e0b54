"""Where the skill bundle's files live, relative to the skill directory.

This module sits in ``scripts/vllm_rocm_review/core/``, so the skill directory is three
levels up. Every default path in the scripts is derived from here, which keeps
the bundle relocatable (copy or symlink it anywhere).
"""

from pathlib import Path

SKILL_DIR = Path(__file__).resolve().parents[3]
REFERENCES_DIR = SKILL_DIR / "references"
UPSTREAM_DIR = REFERENCES_DIR / "upstream"
OUTPUTS_DIR = SKILL_DIR / "outputs"
SURFACE_YAML = REFERENCES_DIR / "rocm-surface.yaml"
RULES_CATALOG = REFERENCES_DIR / "vllm-rocm-review-rules.md"
LENSES_YAML = REFERENCES_DIR / "review-lenses.yaml"
LENSES_TEXT = REFERENCES_DIR / "review-lenses.md"
EXAMPLE_REPORT = REFERENCES_DIR / "example-report.md"
EXAMPLE_PR = SKILL_DIR / "examples" / "example-pr.json"


def bundle_relative(path):
    """``path`` as SKILL.md and the messages name it: relative to the skill directory, with ``/``."""
    return Path(path).relative_to(SKILL_DIR).as_posix()
