"""Load the review lenses: references/review-lenses.yaml (facts) and review-lenses.md (texts).

The YAML says what each lens asks, what it reads first, which catalog sections it owns, what
selects it, what it costs and how many tool calls it may spend; the markdown holds the text a lens pass is given, one anchored
section per lens (``lens-<id>``) plus ``lens-common``. Loading checks both files and that they
name the same lenses; ``cross_check`` checks the YAML against the surface file and the catalog.
"""

import functools
from dataclasses import dataclass
from pathlib import Path

import yaml

from .catalog import parse_catalog
from .file_errors import read_failure
from .skill_paths import LENSES_TEXT
from .skill_paths import LENSES_YAML
from .skill_paths import bundle_relative

SCHEMA_VERSION = 1
COMMON_ANCHOR = "lens-common"
TOP_LEVEL_KEYS = {"schema_version", "min_lenses", "max_lenses", "min_score", "weights", "fallback",
                  "validator_cost_tokens", "tool_call_budget", "merge", "lenses"}
MERGE_KEYS = {"same_text", "nearby_lines"}
LENS_KEYS = {"id", "question", "read_first", "owns", "selected_by", "cost_tokens"}
OPTIONAL_LENS_KEYS = {"tool_call_budget"}
SELECTOR_KEYS = ("families", "pr_types", "tiers")


class LensError(ValueError):
    """The lens files are missing, malformed or disagree."""


@dataclass(frozen=True)
class Lens:
    id: str
    question: str
    read_first: tuple
    owns: tuple
    families: frozenset
    pr_types: frozenset
    tiers: frozenset
    cost_tokens: int
    tool_call_budget: int

    @property
    def anchor(self):
        return lens_anchor(self.id)


@dataclass(frozen=True)
class LensSet:
    lenses: tuple
    min_lenses: int
    max_lenses: int
    min_score: int
    weights: dict
    fallback: tuple
    validator_cost_tokens: int
    tool_call_budget: int
    merge: "MergeSettings"
    text_path: str

    def by_id(self, lens_id):
        return next((lens for lens in self.lenses if lens.id == lens_id), None)


@dataclass(frozen=True)
class MergeSettings:
    """When merge_findings.py joins two candidates by itself, and when it only proposes (see the YAML)."""

    same_text: float
    nearby_lines: int


def lens_anchor(lens_id):
    return f"lens-{lens_id}"


def load_lenses(yaml_path=LENSES_YAML, text_path=LENSES_TEXT):
    """The validated lens set; LensError naming the file and the problem otherwise."""
    data = _read_yaml(Path(yaml_path))
    problems = validate_lens_data(data)
    if problems:
        raise LensError(f"{yaml_path}: {problems[0]}" + (f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""))
    lens_set = _build(data, _display(text_path))
    text_problems = text_disagreements(lens_set, _read_text(Path(text_path)))
    if text_problems:
        raise LensError(f"{text_path}: {text_problems[0]}")
    return lens_set


@functools.cache
def bundle_lenses():
    """The bundle's own lens set, loaded once per process."""
    return load_lenses()


def validate_lens_data(data):
    """Problems with the YAML's shape, one string each; empty when it is usable."""
    if not isinstance(data, dict):
        return ["the top level is not a mapping"]
    problems = [f"unknown key {key!r}" for key in sorted(set(data) - TOP_LEVEL_KEYS)]
    problems += [f"missing key {key!r}" for key in sorted(TOP_LEVEL_KEYS - set(data))]
    if problems:
        return problems
    if data["schema_version"] != SCHEMA_VERSION:
        problems.append(f"schema_version must be {SCHEMA_VERSION}")
    for key in ("min_lenses", "max_lenses", "min_score", "validator_cost_tokens"):
        if not _count(data[key]):
            problems.append(f"{key} must be a non-negative integer")
    if not _count(data["tool_call_budget"]) or data["tool_call_budget"] == 0:
        problems.append("tool_call_budget must be a positive integer")
    merge = data["merge"]
    if not isinstance(merge, dict) or set(merge) != MERGE_KEYS or not _count(merge["nearby_lines"]) \
            or isinstance(merge["same_text"], bool) or not isinstance(merge["same_text"], (int, float)) \
            or not 0 < merge["same_text"] <= 1:
        problems.append("merge must be {same_text: a ratio in (0, 1], nearby_lines: a non-negative integer}")
    weights = data["weights"]
    if not isinstance(weights, dict) or set(weights) != set(SELECTOR_KEYS) or not all(map(_count, weights.values())):
        problems.append(f"weights must give a non-negative integer for each of {', '.join(SELECTOR_KEYS)}")
    if not problems and data["min_lenses"] > data["max_lenses"]:
        problems.append("min_lenses is larger than max_lenses")
    lenses = data["lenses"]
    if not isinstance(lenses, list) or not lenses:
        return problems + ["lenses must be a non-empty list"]
    seen, owned = set(), {}
    for index, lens in enumerate(lenses):
        where = f"lenses[{index}]"
        if not isinstance(lens, dict):
            problems.append(f"{where} is not a mapping")
            continue
        where = f"lens {lens.get('id', index)!r}"
        problems += [f"{where}: unknown key {key!r}" for key in sorted(set(lens) - LENS_KEYS - OPTIONAL_LENS_KEYS)]
        problems += [f"{where}: missing key {key!r}" for key in sorted(LENS_KEYS - set(lens))]
        if not LENS_KEYS <= set(lens) <= LENS_KEYS | OPTIONAL_LENS_KEYS:
            continue
        if "tool_call_budget" in lens and (not _count(lens["tool_call_budget"]) or lens["tool_call_budget"] == 0):
            problems.append(f"{where}: tool_call_budget must be a positive integer")
        if lens["id"] in seen:
            problems.append(f"{where}: defined twice")
        seen.add(lens["id"])
        if not isinstance(lens["question"], str) or not lens["question"].strip():
            problems.append(f"{where}: question must be a non-empty string")
        for key in ("read_first", "owns"):
            if not _strings(lens[key]) or not lens[key]:
                problems.append(f"{where}: {key} must be a non-empty list of strings")
        for anchor in lens["owns"] if _strings(lens["owns"]) else ():
            if anchor in owned:
                problems.append(f"{where}: section {anchor!r} is already owned by lens {owned[anchor]!r}")
            owned.setdefault(anchor, lens["id"])
        selectors = lens["selected_by"]
        if not isinstance(selectors, dict) or set(selectors) != set(SELECTOR_KEYS):
            problems.append(f"{where}: selected_by must have exactly the keys {', '.join(SELECTOR_KEYS)}")
        else:
            if not _strings(selectors["families"]) or not _strings(selectors["pr_types"]):
                problems.append(f"{where}: selected_by families and pr_types must be lists of strings")
            if not isinstance(selectors["tiers"], list) or any(tier not in (1, 2, 3) for tier in selectors["tiers"]):
                problems.append(f"{where}: selected_by tiers must be a list of 1, 2 or 3")
        if not _count(lens["cost_tokens"]) or lens["cost_tokens"] == 0:
            problems.append(f"{where}: cost_tokens must be a positive integer")
    if not _strings(data["fallback"]) or any(lens_id not in seen for lens_id in data["fallback"]):
        problems.append("fallback must list lens ids defined under lenses")
    elif isinstance(data["min_lenses"], int) and len(data["fallback"]) < data["min_lenses"]:
        problems.append("fallback must list at least min_lenses lenses")
    return problems


def text_disagreements(lens_set, text):
    """How the lens texts disagree with the lens list: a missing, extra or empty section."""
    sections = parse_catalog(text)
    anchors = [section.anchor for section in sections.sections]
    expected = [COMMON_ANCHOR] + [lens.anchor for lens in lens_set.lenses]
    problems = [f"no section <a id=\"{anchor}\"></a> for {anchor}" for anchor in expected if anchor not in anchors]
    problems += [f"section {anchor!r} names no lens in the YAML" for anchor in anchors
                 if anchor.startswith("lens-") and anchor not in expected]
    problems += [f"section {anchor!r} is empty" for anchor in expected if anchor in anchors
                 and not "".join(sections.section_lines(anchor)[2:]).strip()]
    return problems


def cross_check(lens_set, family_ids, pr_type_ids, catalog_anchors):
    """Names in the lens YAML that the surface file or the rule catalog does not define."""
    problems = []
    for lens in lens_set.lenses:
        problems += [f"lens {lens.id!r}: unknown diff family {name!r}" for name in sorted(lens.families - set(family_ids))]
        problems += [f"lens {lens.id!r}: unknown PR type {name!r}" for name in sorted(lens.pr_types - set(pr_type_ids))]
        problems += [f"lens {lens.id!r}: owns {anchor!r}, which is no section of the rule catalog"
                     for anchor in lens.owns if anchor not in set(catalog_anchors)]
    return problems


def _build(data, text_path):
    lenses = tuple(
        Lens(id=item["id"], question=" ".join(item["question"].split()), read_first=tuple(item["read_first"]),
             owns=tuple(item["owns"]), families=frozenset(item["selected_by"]["families"]),
             pr_types=frozenset(item["selected_by"]["pr_types"]), tiers=frozenset(item["selected_by"]["tiers"]),
             cost_tokens=item["cost_tokens"], tool_call_budget=item.get("tool_call_budget", data["tool_call_budget"]))
        for item in data["lenses"])
    return LensSet(lenses, data["min_lenses"], data["max_lenses"], data["min_score"], dict(data["weights"]),
                   tuple(data["fallback"]), data["validator_cost_tokens"], data["tool_call_budget"],
                   MergeSettings(float(data["merge"]["same_text"]), data["merge"]["nearby_lines"]), text_path)


def _count(value):
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _strings(value):
    return isinstance(value, list) and all(isinstance(item, str) and item.strip() for item in value)


def _read_text(path):
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise LensError(f"{path}: {read_failure(exc)}") from None


def _read_yaml(path):
    try:
        return yaml.safe_load(_read_text(path))
    except yaml.YAMLError as exc:
        raise LensError(f"{path}: not YAML ({' '.join(str(exc).split())})") from None


def _display(path):
    """The text file's path as messages name it (bundle-relative when inside the bundle)."""
    try:
        return bundle_relative(path)
    except ValueError:
        return str(path)
