"""Load and validate references/rocm-surface.yaml, the single source of machine-readable facts.

This module checks the shape of the knowledge sections (markers, paths, tiers, PR types,
judgment rules, mori API) and of ``upstream_sources``; triage_config.py checks the two
sections triage owns. It also holds the few helpers every consumer needs to read paths
the same way: a path containing ``*``, ``?`` or ``[`` is a glob matched with
``fnmatch.fnmatchcase``, so ``*`` also crosses ``/`` (``**`` adds nothing) and matching
is case-sensitive, like repository paths.
"""

import fnmatch
import functools
import re
from pathlib import Path

import yaml

from .file_errors import read_failure
from .skill_paths import SURFACE_YAML

TOP_LEVEL_TYPES = {
    "schema_version": int,
    "rule_ids": list,
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
    "upstream_pins": dict,
    "context_pack": dict,
}

UPSTREAM_SOURCE_KEYS = {"name", "repo", "path", "ref", "kind", "target", "optional"}
UPSTREAM_PIN_KEYS = {"module", "arg", "repo", "package_dir"}
UPSTREAM_PIN_OPTIONAL = {"wrappers", "wrapper_class"}
IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
GITHUB_REPO = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*/[A-Za-z0-9][A-Za-z0-9_.-]*$")

RULE_ID = re.compile(r"^(?:[A-GPV]\d+b?|HK)$")
STRENGTHS = ("strong", "weak")
TIERS = (1, 2, 3)
GLOB_CHARACTERS = "*?["
MARKER_KINDS = ("text", "path")
MORI_MODULE = re.compile(r"^mori(?:\.[a-z_][a-z0-9_]*)*$")
MORI_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)?$")

MARKER_KEYS = {"id", "pattern", "strength", "why"}
GUARD_KEYS = {"id", "pattern", "suppresses", "why"}
KNOWN_PATH_KEYS = {"path", "why"}
KNOWN_PATH_OPTIONAL = {"old", "moved_to"}
SHARED_KEYS = {"path", "why"}
SHARED_OPTIONAL = {"exclude"}
TIER_KEYS = {"tier", "path", "why"}
TUNING_KEYS = {"globs", "amd_device_pattern"}
PR_TYPE_KEYS = {"id", "label", "rules"}
PR_TYPE_OPTIONAL = {"paths", "text", "always"}
JUDGMENT_KEYS = {"id", "why"}


class SurfaceError(ValueError):
    """The surface file is missing, unparsable or does not match its schema."""


def load_surface(path=SURFACE_YAML):
    """Parse and validate the surface file; raise SurfaceError naming the first problem."""
    path = Path(path)
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise SurfaceError(f"{path}: {read_failure(exc)}") from None
    except yaml.YAMLError as exc:
        raise SurfaceError(f"{path}: not valid YAML{_yaml_error_place(exc)}") from None
    problems = validate_surface(data)
    if problems:
        raise SurfaceError(f"{path}: {problems[0]}")
    return data


def _yaml_error_place(exc):
    """`` at line L, column C: problem`` of a YAML error, on one line."""
    mark = getattr(exc, "problem_mark", None)
    where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
    problem = getattr(exc, "problem", None) or " ".join(str(exc).split())
    return f"{where}: {problem}"


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
    if problems:
        return problems
    problems.extend(_validate_hipified_csrc(data.get("hipified_csrc")))
    rule_ids, rule_problems = _validate_rule_ids(data["rule_ids"])
    problems.extend(rule_problems)
    problems.extend(_validate_markers(data["markers"]))
    problems.extend(_validate_known_paths(data["known_paths"]))
    problems.extend(_validate_shared_surface(data["shared_surface"]))
    problems.extend(_validate_backbone_tiers(data["backbone_tiers"]))
    problems.extend(_validate_tuning_configs(data["tuning_configs"]))
    problems.extend(_validate_pr_types(data["pr_types"], rule_ids))
    problems.extend(_validate_judgment_rules(data["judgment_rules"], rule_ids))
    problems.extend(_validate_reachability(data, rule_ids))
    problems.extend(_validate_mori_api(data["mori_api"]))
    problems.extend(_validate_upstream_sources(data["upstream_sources"]))
    problems.extend(_validate_upstream_pins(data["upstream_pins"]))
    problems.extend(_validate_context_pack(data["context_pack"]))
    return problems


# --- helpers other modules use ---------------------------------------------------------


def is_glob(path):
    """True when a surface path is a glob rather than one repository path."""
    return any(character in path for character in GLOB_CHARACTERS)


def glob_matches(pattern, paths):
    """The paths that ``pattern`` names: fnmatch for globs (``*`` crosses ``/``), equality otherwise."""
    if not is_glob(pattern):
        return [path for path in paths if path == pattern]
    return [path for path in paths if fnmatch.fnmatchcase(path, pattern)]


def entry_matches(entry, path):
    """Does a path-bearing surface entry name ``path``, after its ``exclude`` globs?"""
    if not glob_matches(entry["path"], [path]):
        return False
    return not any(glob_matches(pattern, [path]) for pattern in entry.get("exclude") or [])


def iter_surface_paths(surface):
    """Yield ``(section, entry)`` for every path-bearing entry; tuning globs come as ``{"path": glob}``."""
    for section in ("known_paths", "shared_surface", "backbone_tiers"):
        for entry in surface.get(section) or []:
            yield section, entry
    for entry in ((surface.get("checks") or {}).get("deep_review") or {}).get("paths") or []:
        yield "deep_review", entry
    for pattern in (surface.get("tuning_configs") or {}).get("globs") or []:
        yield "tuning_configs", {"path": pattern}
    pins = surface.get("upstream_pins") or {}
    if pins.get("dockerfile"):
        yield "upstream_pins", {"path": pins["dockerfile"]}
    for library in pins.get("libraries") or []:
        if library.get("wrappers"):
            yield "upstream_pins", {"path": library["wrappers"]}
    pack = surface.get("context_pack") or {}
    for family in pack.get("twin_families") or []:
        yield "context_pack", {"path": family["dir"] + "/*.py"}
    for key in ("amd_files", "mirrored_files"):
        for path in (pack.get("ci") or {}).get(key) or []:
            yield "context_pack", {"path": path}
    for pair in (pack.get("platform_twins") or {}).get("pairs") or []:
        for path in pair:
            yield "context_pack", {"path": path}


def check_surface_paths(surface, tree_paths):
    """Problems of the surface's paths against one vLLM tree (a collection of repository paths).

    A plain path must exist and a glob must match at least one path; an ``old: true`` entry
    must NOT exist and its ``moved_to`` must; every ``exclude`` glob must still match something.
    """
    present = set(tree_paths)
    problems = []
    for section, entry in iter_surface_paths(surface):
        path = entry["path"]
        found = bool(glob_matches(path, present))
        if entry.get("old"):
            if found:
                problems.append(f"{section}: old location {path} exists again in the tree")
            moved_to = entry.get("moved_to")
            if moved_to and not glob_matches(moved_to, present):
                problems.append(f"{section}: {path} moved_to {moved_to}, which is not in the tree")
        elif not found:
            what = "matches no path" if is_glob(path) else "is not in the tree"
            problems.append(f"{section}: {path} {what}")
        for pattern in entry.get("exclude") or []:
            if not glob_matches(pattern, present):
                problems.append(f"{section}: {path} exclude {pattern} matches no path")
    return problems


def find_markers(surface, kind, text):
    """The ``kind`` ("text" or "path") markers that match ``text``, minus those a matching guard suppresses."""
    markers = surface["markers"]
    suppressed = set()
    for guard in markers.get("guards") or []:
        if compile_pattern(guard["pattern"]).search(text):
            suppressed.update(guard["suppresses"])
    return [marker for marker in markers.get(kind) or []
            if marker["id"] not in suppressed and compile_pattern(marker["pattern"]).search(text)]


def is_rocm_tuning_config(surface, path):
    """A tuning JSON counts as ROCm only when its file name names an AMD/Radeon device."""
    tuning = surface["tuning_configs"]
    if not any(glob_matches(pattern, [path]) for pattern in tuning["globs"]):
        return False
    return compile_pattern(tuning["amd_device_pattern"]).search(path.rsplit("/", 1)[-1]) is not None


@functools.lru_cache(maxsize=None)
def compile_pattern(pattern):
    """Surface patterns are Python regexes matched case-insensitively."""
    return re.compile(pattern, re.IGNORECASE)


# --- section validators ------------------------------------------------------------------


def _validate_rule_ids(rule_ids):
    problems = []
    for index, rule_id in enumerate(rule_ids):
        if not isinstance(rule_id, str) or not RULE_ID.match(rule_id):
            problems.append(f"rule_ids[{index}] {rule_id!r} is not a rule ID such as A1, D1b or HK")
    seen = [rule_id for rule_id in rule_ids if isinstance(rule_id, str)]
    for rule_id in sorted({rule_id for rule_id in seen if seen.count(rule_id) > 1}):
        problems.append(f"rule_ids: {rule_id} is repeated")
    return set(seen), problems


def _validate_markers(markers):
    problems = _unknown_keys("markers", markers, set(MARKER_KINDS) | {"guards"})
    ids = set()
    for kind in MARKER_KINDS:
        items = markers.get(kind)
        if not isinstance(items, list) or not items:
            problems.append(f"markers.{kind} must be a non-empty list")
            continue
        for index, item in enumerate(items):
            where = f"markers.{kind}[{index}]"
            if not _is_entry(item, where, MARKER_KEYS, set(), problems):
                continue
            problems.extend(_matcher_problems(where, item, ids))
            if item["strength"] not in STRENGTHS:
                problems.append(f"{where}.strength must be one of {', '.join(STRENGTHS)}, not {item['strength']!r}")
    guards = markers.get("guards")
    if not isinstance(guards, list):
        problems.append("markers.guards must be a list")
        return problems
    guard_ids = set()
    for index, guard in enumerate(guards):
        where = f"markers.guards[{index}]"
        if not _is_entry(guard, where, GUARD_KEYS, set(), problems):
            continue
        problems.extend(_matcher_problems(where, guard, guard_ids))
        suppresses = guard["suppresses"]
        if not isinstance(suppresses, list) or not suppresses:
            problems.append(f"{where}.suppresses must be a non-empty list of marker ids")
            continue
        for marker_id in suppresses:
            if marker_id not in ids:
                problems.append(f"{where}.suppresses names {marker_id!r}, which is no marker id")
    return problems


def _matcher_problems(where, entry, seen_ids):
    """The id, pattern and why every marker and guard carries."""
    return [*_id_problems(where, entry["id"], seen_ids), *_pattern_problems(where, entry["pattern"]),
            *_text_problems(where, "why", entry["why"])]


def _validate_path_entries(section, entries, required, optional, check_extra):
    """Shape, path and why of each entry of a path-bearing section, then ``check_extra(where, entry)``."""
    problems = []
    for index, entry in enumerate(entries):
        where = f"{section}[{index}]"
        if not _is_entry(entry, where, required, optional, problems):
            continue
        problems.extend(_path_problems(where, "path", entry["path"]))
        problems.extend(_text_problems(where, "why", entry["why"]))
        problems.extend(check_extra(where, entry))
    problems.extend(_repeated_paths(section, entries))
    return problems


def _validate_known_paths(entries):
    return _validate_path_entries("known_paths", entries, KNOWN_PATH_KEYS, KNOWN_PATH_OPTIONAL, _known_path_problems)


def _known_path_problems(where, entry):
    problems = []
    old = entry.get("old", False)
    if not isinstance(old, bool):
        problems.append(f"{where}.old must be true or false")
    if "moved_to" in entry:
        if old is not True:
            problems.append(f"{where}.moved_to is only allowed with old: true")
        problems.extend(_path_problems(where, "moved_to", entry["moved_to"]))
        if isinstance(entry["moved_to"], str) and is_glob(entry["moved_to"]):
            problems.append(f"{where}.moved_to must be one path, not a glob")
    return problems


def _validate_shared_surface(entries):
    return _validate_path_entries("shared_surface", entries, SHARED_KEYS, SHARED_OPTIONAL, _exclude_problems)


def _exclude_problems(where, entry):
    if "exclude" not in entry:
        return []
    exclude = entry["exclude"]
    if not isinstance(exclude, list) or not exclude:
        return [f"{where}.exclude must be a non-empty list of globs"]
    return [problem for position, pattern in enumerate(exclude)
            for problem in _path_problems(where, f"exclude[{position}]", pattern)]


def _validate_backbone_tiers(entries):
    problems = [] if entries else ["backbone_tiers must not be empty"]
    return problems + _validate_path_entries("backbone_tiers", entries, TIER_KEYS, set(), _tier_problems)


def _tier_problems(where, entry):
    tier = entry["tier"]
    if isinstance(tier, bool) or tier not in TIERS:
        return [f"{where}.tier must be 1, 2 or 3, not {tier!r}"]
    return []


def _validate_tuning_configs(tuning):
    where = "tuning_configs"
    problems = []
    if not _is_entry(tuning, where, TUNING_KEYS, set(), problems):
        return problems
    problems.extend(_pattern_problems(where, tuning["amd_device_pattern"], key="amd_device_pattern"))
    globs = tuning["globs"]
    if not isinstance(globs, list) or not globs:
        return problems + [f"{where}.globs must be a non-empty list"]
    for index, pattern in enumerate(globs):
        problems.extend(_path_problems(where, f"globs[{index}]", pattern))
        if isinstance(pattern, str) and not is_glob(pattern):
            problems.append(f"{where}.globs[{index}] must be a glob")
    return problems


def _validate_pr_types(entries, rule_ids):
    problems = []
    ids = set()
    always = []
    for index, entry in enumerate(entries):
        where = f"pr_types[{index}]"
        if not _is_entry(entry, where, PR_TYPE_KEYS, PR_TYPE_OPTIONAL, problems):
            continue
        problems.extend(_id_problems(where, entry["id"], ids))
        problems.extend(_text_problems(where, "label", entry["label"]))
        problems.extend(_rule_list_problems(where, entry["rules"], rule_ids))
        if entry.get("always", False) is True:
            always.append(entry)
            if entry.get("paths") or entry.get("text"):
                problems.append(f"{where} has always: true, so it takes no paths or text")
            continue
        if "always" in entry and entry["always"] is not False:
            problems.append(f"{where}.always must be true or false")
        patterns = 0
        for key in ("paths", "text"):
            if key not in entry:
                continue
            if not isinstance(entry[key], list):
                problems.append(f"{where}.{key} must be a list of regexes")
                continue
            patterns += len(entry[key])
            for position, pattern in enumerate(entry[key]):
                problems.extend(_pattern_problems(where, pattern, key=f"{key}[{position}]"))
        if "paths" not in entry:
            problems.append(f"{where} lacks paths (use paths: [] for a text-only type)")
        elif not patterns:
            problems.append(f"{where} has neither paths nor text patterns; it can never match")
    if len(always) != 1:
        problems.append(f"pr_types must hold exactly one always: true entry, found {len(always)}")
    elif "HK" not in always[0]["rules"]:
        problems.append(f"pr_types: the always: true entry {always[0]['id']!r} must include HK")
    return problems


def _validate_judgment_rules(entries, rule_ids):
    problems = []
    ids = set()
    for index, entry in enumerate(entries):
        where = f"judgment_rules[{index}]"
        if not _is_entry(entry, where, JUDGMENT_KEYS, set(), problems):
            continue
        problems.extend(_id_problems(where, entry["id"], ids))
        if entry["id"] not in rule_ids:
            problems.append(f"{where}.id {entry['id']!r} is not in rule_ids")
        problems.extend(_text_problems(where, "why", entry["why"]))
    return problems


def _validate_reachability(data, rule_ids):
    """Every fixed rule ID must be mandatory for some PR type or applied by judgment."""
    reached = {entry["id"] for entry in data["judgment_rules"] if isinstance(entry, dict)}
    for entry in data["pr_types"]:
        if isinstance(entry, dict) and isinstance(entry.get("rules"), list):
            reached.update(rule for rule in entry["rules"] if isinstance(rule, str))
    return [f"rule {rule_id} is reachable from no pr_type and no judgment_rules entry"
            for rule_id in sorted(rule_ids - reached)]


def _validate_mori_api(api):
    problems = []
    if not api:
        return ["mori_api must not be empty"]
    for module, names in api.items():
        where = f"mori_api[{module!r}]"
        if not isinstance(module, str) or not MORI_MODULE.match(module):
            problems.append(f"{where}: module must be mori or a dotted mori submodule")
        if not isinstance(names, list) or not names:
            problems.append(f"{where} must be a non-empty list of names")
            continue
        for name in names:
            if not isinstance(name, str) or not MORI_NAME.match(name):
                problems.append(f"{where}: {name!r} is not a name or Class.member")
        repeated = sorted({name for name in names if isinstance(name, str) and names.count(name) > 1})
        problems.extend(f"{where}: {name} is repeated" for name in repeated)
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


def _validate_upstream_pins(pins):
    problems = _unknown_keys("upstream_pins", pins, {"dockerfile", "libraries"})
    problems.extend(_path_problems("upstream_pins", "dockerfile", pins.get("dockerfile")))
    libraries = pins.get("libraries")
    if not isinstance(libraries, list) or not libraries:
        return problems + ["upstream_pins.libraries must be a non-empty list"]
    modules = set()
    for index, library in enumerate(libraries):
        where = f"upstream_pins.libraries[{index}]"
        if not _is_entry(library, where, UPSTREAM_PIN_KEYS, UPSTREAM_PIN_OPTIONAL, problems):
            continue
        for key in ("module", "arg"):
            if not isinstance(library[key], str) or not IDENTIFIER.match(library[key]):
                problems.append(f"{where}.{key} must be an identifier")
        if library["module"] in modules:
            problems.append(f"{where}.module {library['module']!r} is repeated")
        modules.add(library["module"])
        if not isinstance(library["repo"], str) or not GITHUB_REPO.match(library["repo"]):
            problems.append(f"{where}.repo must be OWNER/NAME")
        problems.extend(_path_problems(where, "package_dir", library["package_dir"]))
        if ("wrappers" in library) != ("wrapper_class" in library):
            problems.append(f"{where}: wrappers and wrapper_class go together")
        elif "wrappers" in library:
            problems.extend(_path_problems(where, "wrappers", library["wrappers"]))
            if not isinstance(library["wrapper_class"], str) or not IDENTIFIER.match(library["wrapper_class"]):
                problems.append(f"{where}.wrapper_class must be an identifier")
    return problems


CONTEXT_PACK_KEYS = {"twin_families", "capability_name", "env_name", "env_sets", "hot_entry",
                     "accumulator_names", "callers_per_symbol", "readers_per_variable", "ci", "code_map",
                     "upstream", "undone_fixes", "platform_twins", "stale_call_sites", "twin_flags_max",
                     "flags_off", "hazards"}
CODE_MAP_COUNTS = {"max_lines", "base_in_full_up_to", "diff_context", "twins_with_text", "twin_max_lines",
                   "upstream_max_lines", "hunk_context"}
UPSTREAM_LIMIT_KEYS = {"max_files", "max_bytes", "kernel_modules_per_definition", "configs_per_definition",
                       "sources_per_op"}
COMPILED_OP_KEYS = {"repo", "decorator", "build_config", "path_variables"}
HAZARD_KEYS = {"platform_modules", "platform_specific_paths", "widened_guards", "cache_decorators", "stream",
               "ci_files", "commented_command", "cmake_file", "cuda_only_guard", "bindings_file"}
TWIN_FAMILY_KEYS = {"id", "dir", "why", "contracts"}
CI_KEYS = {"amd_files", "mirrored_files", "mirror_key", "mirror_hardwares_key", "default_working_dir", "working_dirs"}


def _validate_context_pack(section):
    where = "context_pack"
    problems = _unknown_keys(where, section, CONTEXT_PACK_KEYS)
    problems += [f"{where} lacks {key}" for key in sorted(CONTEXT_PACK_KEYS - section.keys())]
    if problems:
        return problems
    seen = set()
    for index, family in enumerate(section["twin_families"] if isinstance(section["twin_families"], list) else []):
        here = f"{where}.twin_families[{index}]"
        if _is_entry(family, here, TWIN_FAMILY_KEYS, set(), problems):
            problems += _id_problems(here, family["id"], seen) + _path_problems(here, "dir", family["dir"])
            if not isinstance(family["contracts"], list) or not all(
                    isinstance(name, str) and IDENTIFIER.match(name) for name in family["contracts"]):
                problems.append(f"{here}.contracts must be a list of class names")
    if not isinstance(section["twin_families"], list):
        problems.append(f"{where}.twin_families must be a list")
    for key in ("capability_name", "env_name", "hot_entry", "accumulator_names"):
        problems += _pattern_problems(where, section[key], key)
    for index, entry in enumerate(section["env_sets"] if isinstance(section["env_sets"], list) else []):
        here = f"{where}.env_sets[{index}]"
        if _is_entry(entry, here, {"pattern"}, {"suffixes"}, problems):
            problems += _pattern_problems(here, entry["pattern"])
            if isinstance(entry["pattern"], str) and not all(
                    group in entry["pattern"] for group in ("(?P<name>", "(?P<value>")):
                problems.append(f"{here}.pattern must capture (?P<name>...) and (?P<value>...)")
    if not isinstance(section["flags_off"], list) or not all(isinstance(code, str) for code in section["flags_off"]):
        problems.append(f"{where}.flags_off must be a list of flag codes")
    for key in ("callers_per_symbol", "readers_per_variable", "twin_flags_max"):
        if not isinstance(section[key], int) or section[key] < 1:
            problems.append(f"{where}.{key} must be a positive integer")
    problems += _pack_facts_problems(where, section)
    hazards = section["hazards"]
    if _is_entry(hazards, f"{where}.hazards", HAZARD_KEYS, set(), problems):
        for key in ("commented_command", "cuda_only_guard"):
            problems += _pattern_problems(f"{where}.hazards", hazards[key], key)
        if not isinstance(hazards["widened_guards"], dict) or not all(
                isinstance(narrower, list) for narrower in hazards["widened_guards"].values()):
            problems.append(f"{where}.hazards.widened_guards must map a guard to the list of guards it widens")
        if not isinstance(hazards["stream"], dict) or {"call", "helper", "helper_modules"} - hazards["stream"].keys():
            problems.append(f"{where}.hazards.stream needs call, helper and helper_modules")
    ci = section["ci"]
    if _is_entry(ci, f"{where}.ci", CI_KEYS, set(), problems):
        if not isinstance(ci["working_dirs"], dict) or ci["default_working_dir"] not in ci["working_dirs"]:
            problems.append(f"{where}.ci.working_dirs must be a mapping that holds default_working_dir")
        for key in ("amd_files", "mirrored_files"):
            if not isinstance(ci[key], list):
                problems.append(f"{where}.ci.{key} must be a list of paths")
            else:
                problems += [p for index, path in enumerate(ci[key])
                             for p in _path_problems(f"{where}.ci", f"{key}[{index}]", path)]
    return (problems + _code_map_problems(section["code_map"])
            + _upstream_limit_problems(f"{where}.upstream", section["upstream"]))


def _code_map_problems(section):
    where = "context_pack.code_map"
    problems = []
    if not _is_entry(section, where, CODE_MAP_COUNTS | {"hunk_globs"}, set(), problems):
        return problems
    problems += [f"{where}.{key} must be a whole number, at least 0" for key in sorted(CODE_MAP_COUNTS)
                 if not isinstance(section[key], int) or isinstance(section[key], bool) or section[key] < 0]
    if not isinstance(section["hunk_globs"], list) or not all(isinstance(g, str) and g for g in section["hunk_globs"]):
        problems.append(f"{where}.hunk_globs must be a list of file-name globs")
    return problems


def _upstream_limit_problems(where, upstream):
    """``context_pack.upstream``: the per-PR save budget, the probe pattern, the compiled-op rules."""
    problems = []
    if not _is_entry(upstream, where, UPSTREAM_LIMIT_KEYS | {"availability_probe", "compiled_ops"}, set(), problems):
        return problems
    problems += [f"{where}.{key} must be a positive integer" for key in sorted(UPSTREAM_LIMIT_KEYS)
                 if not isinstance(upstream[key], int) or upstream[key] < 1]
    problems += _pattern_problems(where, upstream["availability_probe"], "availability_probe")
    for index, rule in enumerate(upstream["compiled_ops"] if isinstance(upstream["compiled_ops"], list) else []):
        here = f"{where}.compiled_ops[{index}]"
        if _is_entry(rule, here, COMPILED_OP_KEYS, set(), problems):
            problems += _path_problems(here, "build_config", rule["build_config"])
            if not isinstance(rule["path_variables"], dict):
                problems.append(f"{here}.path_variables must be a mapping")
    if not isinstance(upstream["compiled_ops"], list):
        problems.append(f"{where}.compiled_ops must be a list")
    return problems


def _pack_facts_problems(where, section):
    """Shape of the undone_fixes, platform_twins and stale_call_sites settings."""
    problems = []
    fixes, twins, stale = section["undone_fixes"], section["platform_twins"], section["stale_call_sites"]
    if _is_entry(fixes, f"{where}.undone_fixes", {"recent_days", "fix_subject", "ignored_subject", "skip_prefixes",
                                                      "max_entries"}, set(), problems):
        for key in ("fix_subject", "ignored_subject"):
            problems += _pattern_problems(f"{where}.undone_fixes", fixes[key], key)
    if _is_entry(twins, f"{where}.platform_twins", {"pairs", "vendor_words", "ignored_calls", "max_differences"},
                 set(), problems):
        for key in ("vendor_words", "ignored_calls"):
            problems += _pattern_problems(f"{where}.platform_twins", twins[key], key)
        for index, pair in enumerate(twins["pairs"] if isinstance(twins["pairs"], list) else [None]):
            if not isinstance(pair, list) or len(pair) != 2:
                problems.append(f"{where}.platform_twins.pairs[{index}] must be a list of two paths")
            else:
                problems += [p for path in pair for p in _path_problems(f"{where}.platform_twins", f"pairs[{index}]", path)]
    _is_entry(stale, f"{where}.stale_call_sites", {"max_files", "max_entries", "sites_shown"}, set(), problems)
    numbers = [(f"undone_fixes.{k}", (fixes or {}).get(k)) for k in ("recent_days", "max_entries")]
    numbers += [("platform_twins.max_differences", (twins or {}).get("max_differences"))]
    numbers += [(f"stale_call_sites.{k}", (stale or {}).get(k)) for k in ("max_files", "max_entries", "sites_shown")]
    problems += [f"{where}.{key} must be a positive integer" for key, value in numbers
                 if isinstance(fixes, dict) and isinstance(twins, dict) and isinstance(stale, dict)
                 and (not isinstance(value, int) or value < 1)]
    return problems


# --- small checks ----------------------------------------------------------------------------


def _validate_hipified_csrc(section):
    """The optional ``hipified_csrc`` section: CMake list names mapping to csrc paths."""
    if section is None:
        return []
    if not isinstance(section, dict):
        return ["'hipified_csrc' must be a mapping"]
    problems = _unknown_keys("hipified_csrc", section, {"cmake_lists", "former_prefixes", "lists"})
    for name, paths in (section.get("lists") or {}).items():
        if not isinstance(paths, list) or not all(isinstance(p, str) and p.startswith("csrc/") for p in paths):
            problems.append(f"hipified_csrc.lists.{name} must be a list of csrc/ paths")
    return problems


def _unknown_keys(where, mapping, allowed):
    return [f"{where} has unknown key {key!r}" for key in sorted(set(mapping) - allowed, key=str)]


def _is_entry(entry, where, required, optional, problems):
    """Record shape problems of one mapping entry; True when its fields can be checked."""
    if not isinstance(entry, dict):
        problems.append(f"{where} must be a mapping")
        return False
    missing = required - entry.keys()
    if missing:
        problems.append(f"{where} lacks {', '.join(sorted(missing))}")
        return False
    problems.extend(_unknown_keys(where, entry, required | optional))
    return True


def _id_problems(where, value, seen):
    if not isinstance(value, str) or not value.strip():
        return [f"{where}.id must be a non-empty string"]
    if value in seen:
        return [f"{where}.id {value!r} is repeated"]
    seen.add(value)
    return []


def _text_problems(where, key, value):
    if not isinstance(value, str) or not value.strip():
        return [f"{where}.{key} must be a non-empty string"]
    return []


def _pattern_problems(where, pattern, key="pattern"):
    if not isinstance(pattern, str) or not pattern:
        return [f"{where}.{key} must be a non-empty regex string"]
    try:
        compile_pattern(pattern)
    except re.error as exc:
        return [f"{where}.{key} {pattern!r} does not compile: {exc}"]
    return []


def _path_problems(where, key, path):
    if not isinstance(path, str) or not path.strip():
        return [f"{where}.{key} must be a non-empty path"]
    if path.startswith(("/", "./")) or path.endswith("/") or "\\" in path or ".." in path.split("/"):
        return [f"{where}.{key} {path!r} must be a repository-relative file path or glob (no leading /, ./, .., or trailing /)"]
    return []


def _rule_list_problems(where, rules, rule_ids):
    if not isinstance(rules, list) or not rules:
        return [f"{where}.rules must be a non-empty list of rule IDs"]
    problems = [f"{where}.rules names {rule!r}, which is not in rule_ids" for rule in rules if rule not in rule_ids]
    repeated = sorted({rule for rule in rules if isinstance(rule, str) and rules.count(rule) > 1})
    problems.extend(f"{where}.rules repeats {rule}" for rule in repeated)
    return problems


def _repeated_paths(section, entries):
    paths = [entry["path"] for entry in entries if isinstance(entry, dict) and isinstance(entry.get("path"), str)]
    return [f"{section}: {path} is listed twice" for path in sorted({path for path in paths if paths.count(path) > 1})]
