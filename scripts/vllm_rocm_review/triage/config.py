"""Everything triage knows, compiled once from references/rocm-surface.yaml.

The knowledge sections (markers, paths, tiers, PR types, mori API) are validated by
surface.py; this module validates the two sections triage owns, ``diff_families`` and
``checks``, and compiles every surface pattern once (behind a literal pre-filter, see
literal_filter.py) so that triaging a PR only runs them. Nothing here knows a vLLM fact:
it only reads them.
"""

import re
from dataclasses import dataclass, field

from .detectors import DETECTORS
from .literal_filter import FilteredPattern
from .path_patterns import PathPattern, PathTable
from ..core.skill_paths import SURFACE_YAML
from ..core.surface import RULE_ID
from ..core.surface import load_surface

FAMILY_TRIGGERS = ("added", "removed", "changed", "text", "new_file", "touched", "detector")
FAMILY_PATTERN_LISTS = ("added", "removed", "changed", "text", "paths", "exclude_paths", "with_in_file", "unless_in_file")
FAMILY_KEYS = set(FAMILY_PATTERN_LISTS) | {
    "id", "why", "rules", "new_file", "touched", "detector", "params", "skip_kinds", "generic", "include_comments",
    "outside_strings",
}
CHECK_SECTIONS = ("file_kinds", "text_ignore_lines", "gate", "env_vars", "magic_constants", "perf_claims", "ci",
                  "prompt_injection", "mori_symbols", "flags", "deep_review", "reading_plan")


class TriageConfigError(ValueError):
    """The surface file's triage sections are malformed."""


@dataclass(frozen=True)
class Marker:
    id: str
    regex: FilteredPattern
    strength: str
    why: str


@dataclass(frozen=True)
class Guard:
    id: str
    regex: FilteredPattern
    suppresses: frozenset
    why: str


@dataclass(frozen=True)
class PathFact:
    pattern: PathPattern
    why: str
    tier: int | None = None
    old: bool = False
    moved_to: str | None = None
    excludes: tuple = ()

    def matches(self, path):
        return self.pattern.matches(path) and not any(exclude.matches(path) for exclude in self.excludes)


@dataclass(frozen=True)
class PrType:
    id: str
    label: str
    paths: tuple
    text: tuple
    rules: tuple
    always: bool


@dataclass(frozen=True)
class Family:
    id: str
    why: str
    rules: tuple
    added: tuple = ()
    removed: tuple = ()
    changed: tuple = ()
    text: tuple = ()
    paths: tuple = ()
    exclude_paths: tuple = ()
    with_in_file: tuple = ()
    unless_in_file: tuple = ()
    skip_kinds: tuple = ()
    new_file: bool = False
    touched: bool = False
    detector: str | None = None
    params: dict = field(default_factory=dict)
    generic: bool = False
    include_comments: bool = False
    outside_strings: bool = False  # the match (its first group, if any) must lie outside strings, comments and URLs
    any_added: FilteredPattern | None = None  # all patterns that read added lines, as one alternation
    any_removed: FilteredPattern | None = None

    def applies_to_path(self, path, kinds):
        if self.paths and not any(regex.search(path) for regex in self.paths):
            return False
        if any(regex.search(path) for regex in self.exclude_paths):
            return False
        return not (set(self.skip_kinds) & set(kinds))


@dataclass(frozen=True)
class NamedPattern:
    id: str
    regex: FilteredPattern
    why: str
    outside_strings: bool = False


class TriageConfig:
    """Compiled view of the surface file for triage."""

    def __init__(self, data):
        problems = validate_triage_sections(data)
        if problems:
            raise TriageConfigError(problems[0])
        markers = data.get("markers") or {}
        self.text_markers = [_marker(item) for item in markers.get("text") or []]
        # Substrings one of which any strong text marker needs (None: some marker has none).
        strong = [marker.regex.literals for marker in self.text_markers if marker.strength != "weak"]
        self.strong_marker_literals = (tuple(sorted({lit for lits in strong for lit in lits}))
                                       if strong and all(strong) else None)
        self._kinds_cache = {}
        self.path_markers = [_marker(item) for item in markers.get("path") or []]
        self.guards = [Guard(item["id"], _rx(item["pattern"]), frozenset(item.get("suppresses") or []), item.get("why", ""))
                       for item in markers.get("guards") or []]
        self.known_paths = PathTable(PathFact(PathPattern.parse(item["path"]), item.get("why", ""),
                                              old=bool(item.get("old")), moved_to=item.get("moved_to"))
                                     for item in data.get("known_paths") or [])
        self.shared_surface = PathTable(
            PathFact(PathPattern.parse(item["path"]), item.get("why", ""),
                     excludes=tuple(PathPattern.parse(glob) for glob in item.get("exclude") or []))
            for item in data.get("shared_surface") or [])
        hipified = data.get("hipified_csrc") or {}
        self.hipified_csrc = {path: name for name, paths in (hipified.get("lists") or {}).items() for path in paths}
        self.hipified_former_prefixes = dict(hipified.get("former_prefixes") or {})
        self.backbone_tiers = PathTable(PathFact(PathPattern.parse(item["path"]), item.get("why", ""),
                                                 tier=int(item["tier"])) for item in data.get("backbone_tiers") or [])
        tuning = data.get("tuning_configs") or {}
        self.tuning_globs = [PathPattern.parse(glob) for glob in tuning.get("globs") or []]
        self.amd_device = _rx(tuning["amd_device_pattern"]) if tuning.get("amd_device_pattern") else None
        self.pr_types = [PrType(item["id"], item.get("label", item["id"]),
                                tuple(re.compile(pattern, re.IGNORECASE) for pattern in item.get("paths") or []),
                                _rxs(item.get("text")), tuple(item.get("rules") or []), bool(item.get("always")))
                         for item in data.get("pr_types") or []]
        self.judgment_rules = [(item["id"], item.get("why", "")) for item in data.get("judgment_rules") or []]
        self.families = [_family(item) for item in data.get("diff_families") or []]
        self.mori_api = {module: set(names or []) for module, names in (data.get("mori_api") or {}).items()}
        self.upstream_targets = {item["name"]: item["target"] for item in data.get("upstream_sources") or []}
        self.checks = _compile_checks(data.get("checks") or {})

    def is_tuning_config(self, path):
        return any(glob.matches(path) for glob in self.tuning_globs)

    def hipified_list(self, path):
        """The CMake source list through which ROCm builds this csrc path (at its current or former location), or None."""
        if path in self.hipified_csrc:
            return self.hipified_csrc[path]
        for current, former in self.hipified_former_prefixes.items():
            if path.startswith(former) and not path.startswith(current):
                moved = current + path[len(former):]
                if moved in self.hipified_csrc:
                    return self.hipified_csrc[moved]
        return None

    def is_amd_tuning_config(self, path):
        name = path.rsplit("/", 1)[-1]
        return self.is_tuning_config(path) and self.amd_device is not None and self.amd_device.search(name) is not None

    def file_kinds(self, path):
        """Kinds of a changed file (tests, docs, ...); ``code`` when no kind pattern matches."""
        kinds = self._kinds_cache.get(path)
        if kinds is None:
            kinds = [kind for kind, patterns in self.checks["file_kinds"].items() if any(p.search(path) for p in patterns)]
            kinds = self._kinds_cache[path] = kinds or ["code"]
        return kinds

    def moved_location(self, path):
        """Where an old (stale-branch) location lives now, or None."""
        for fact in self.known_paths.matching(path):
            if fact.old and fact.moved_to:
                return fact.moved_to
        return None


def load_triage_config(path=SURFACE_YAML):
    """Load, validate and compile the surface file (default: the bundle's); errors name the file."""
    data = load_surface(path)
    try:
        return TriageConfig(data)
    except TriageConfigError as exc:
        raise TriageConfigError(f"{path}: {exc}") from None


def validate_triage_sections(data):
    """Problems in ``diff_families`` and ``checks``; empty when both are usable."""
    problems = []
    families = data.get("diff_families") or []
    if not isinstance(families, list):
        return ["'diff_families' must be a list"]
    known_rules = set(data.get("rule_ids") or []) or None
    seen = set()
    for index, item in enumerate(families):
        where = f"diff_families[{index}]"
        if not isinstance(item, dict):
            problems.append(f"{where} must be a mapping")
            continue
        where = f"diff_families[{item.get('id', index)}]"
        unknown = set(item) - FAMILY_KEYS
        if unknown:
            problems.append(f"{where}: unknown keys {', '.join(sorted(unknown))}")
        for key in ("id", "why", "rules"):
            if not item.get(key):
                problems.append(f"{where}: {key} is required")
        if item.get("id") in seen:
            problems.append(f"{where}: id is repeated")
        seen.add(item.get("id"))
        for rule in item.get("rules") or []:
            if not (rule in known_rules if known_rules else RULE_ID.match(str(rule))):
                problems.append(f"{where}: {rule!r} is not a rule ID")
        if not any(item.get(trigger) for trigger in FAMILY_TRIGGERS):
            problems.append(f"{where}: needs a trigger ({', '.join(FAMILY_TRIGGERS)})")
        if item.get("detector") and item["detector"] not in DETECTORS:
            problems.append(f"{where}: unknown detector {item['detector']!r}")
        for key in FAMILY_PATTERN_LISTS:
            problems.extend(_regex_problems(item.get(key), f"{where}.{key}"))
    checks = data.get("checks") or {}
    if not isinstance(checks, dict):
        return problems + ["'checks' must be a mapping"]
    if checks:
        missing = [name for name in CHECK_SECTIONS if name not in checks]
        if missing:
            problems.append(f"checks lacks {', '.join(missing)}")
        for kind, patterns in (checks.get("file_kinds") or {}).items():
            problems.extend(_regex_problems(patterns, f"checks.file_kinds.{kind}"))
        named = [("magic_constants", item) for item in (checks.get("magic_constants") or {}).get("patterns") or []]
        named += [("prompt_injection", item) for item in checks.get("prompt_injection") or []]
        named += [("perf_claims.evidence", item) for item in (checks.get("perf_claims") or {}).get("evidence") or []]
        problems.extend(_regex_problems(checks.get("prompt_injection_ignore_lines"),
                                        "checks.prompt_injection_ignore_lines"))
        perf = checks.get("perf_claims") or {}
        problems.extend(_regex_problems([perf[key] for key in ("number", "memory") if perf.get(key)],
                                        "checks.perf_claims"))
        problems.extend(_regex_problems(perf.get("not_a_claim"), "checks.perf_claims.not_a_claim"))
        env = checks.get("env_vars") or {}
        for key in ("reads", "registry_reads"):
            problems.extend(_regex_problems(env.get(key), f"checks.env_vars.{key}"))
            problems.extend(f"checks.env_vars.{key}: {pattern!r} has no (?P<name>...) group"
                            for pattern in env.get(key) or [] if isinstance(pattern, str) and "(?P<name>" not in pattern)
        deep = checks.get("deep_review") or {}
        lines = deep.get("product_lines")
        if lines is not None and (not isinstance(lines, int) or isinstance(lines, bool) or lines < 1):
            problems.append(f"checks.deep_review.product_lines must be a positive whole number of lines, not {lines!r}")
        for position, item in enumerate(deep.get("paths") or []):
            if not isinstance(item, dict) or not isinstance(item.get("path"), str) or not item.get("why"):
                problems.append(f"checks.deep_review.paths[{position}] needs path and why")
        for name, item in named:
            if not isinstance(item, dict) or not item.get("id") or not item.get("pattern"):
                problems.append(f"checks.{name}: each entry needs id and pattern")
            else:
                problems.extend(_regex_problems([item["pattern"]], f"checks.{name}[{item['id']}]"))
        max_days = (checks.get("version_skew") or {}).get("max_days")
        if max_days is not None and (not isinstance(max_days, int) or isinstance(max_days, bool) or max_days < 1):
            problems.append(f"checks.version_skew.max_days must be a whole number of days (1 or more), not {max_days!r}")
        for anchor, when in ((checks.get("reading_plan") or {}).get("only_when_touched") or {}).items():
            if not isinstance(when, dict) or not (when.get("pr_types") or when.get("families")):
                problems.append(f"checks.reading_plan.only_when_touched.{anchor}: needs pr_types or families")
    return problems


def _regex_problems(patterns, where):
    if patterns is None:
        return []
    if not isinstance(patterns, list):
        return [f"{where} must be a list of regexes"]
    problems = []
    for pattern in patterns:
        try:
            re.compile(pattern)
        except (re.error, TypeError) as exc:
            problems.append(f"{where}: bad regex {pattern!r} ({exc})")
    return problems


def _rx(pattern, flags=re.IGNORECASE):
    return FilteredPattern(pattern, flags)


def _rxs(patterns, flags=re.IGNORECASE):
    return tuple(FilteredPattern(pattern, flags) for pattern in patterns or [])


def _marker(item):
    return Marker(item["id"], _rx(item["pattern"]), item.get("strength", "strong"), item.get("why", ""))


def _family(item):
    # Code patterns are case-sensitive (identifiers) and multi-line, so one search over a
    # file's joined lines can rule a pattern out; title/body patterns ignore case.
    added_side = (item.get("added") or []) + (item.get("changed") or [])
    removed_side = (item.get("removed") or []) + (item.get("changed") or [])
    return Family(
        id=item["id"],
        why=item["why"],
        rules=tuple(item["rules"]),
        added=_rxs(item.get("added"), re.MULTILINE),
        removed=_rxs(item.get("removed"), re.MULTILINE),
        changed=_rxs(item.get("changed"), re.MULTILINE),
        text=_rxs(item.get("text")),
        paths=tuple(re.compile(pattern) for pattern in item.get("paths") or []),
        exclude_paths=tuple(re.compile(pattern) for pattern in item.get("exclude_paths") or []),
        with_in_file=_rxs(item.get("with_in_file"), re.MULTILINE),
        unless_in_file=_rxs(item.get("unless_in_file"), re.MULTILINE),
        skip_kinds=tuple(item.get("skip_kinds") or ()),
        new_file=bool(item.get("new_file")),
        touched=bool(item.get("touched")),
        detector=item.get("detector"),
        params=dict(item.get("params") or {}),
        generic=bool(item.get("generic")),
        include_comments=bool(item.get("include_comments")),
        outside_strings=bool(item.get("outside_strings")),
        any_added=_alternation(added_side, re.MULTILINE),
        any_removed=_alternation(removed_side, re.MULTILINE),
    )


def _alternation(patterns, flags):
    """One regex that matches where any of ``patterns`` does, or None for no patterns."""
    return FilteredPattern("|".join(f"(?:{pattern})" for pattern in patterns), flags) if patterns else None


def _compile_checks(checks):
    """Compile the ``checks`` section; absent parts compile to empty, harmless values."""
    gate = checks.get("gate") or {}
    env = checks.get("env_vars") or {}
    perf = checks.get("perf_claims") or {}
    ci = checks.get("ci") or {}
    mori = checks.get("mori_symbols") or {}
    flag_settings = checks.get("flags") or {}
    deep = checks.get("deep_review") or {}
    magic = checks.get("magic_constants") or {}
    reading = checks.get("reading_plan") or {}
    return {
        "file_kinds": {kind: _rxs(patterns, 0) for kind, patterns in (checks.get("file_kinds") or {}).items()},
        "text_ignore_lines": _rxs(checks.get("text_ignore_lines")),
        "gate": {
            "content_kinds": tuple(gate.get("content_kinds") or ("code",)),
            "full_share": float(gate.get("full_share", 0.5)),
            "share_excludes_kinds": tuple(gate.get("share_excludes_kinds") or ()),
            "platform_only_blocks": [NamedPattern(item["id"], _rx(item["pattern"], 0), item.get("why", ""))
                                     for item in gate.get("platform_only_blocks") or []],
        },
        "env_vars": {
            "reads": _rxs(env.get("reads"), 0),
            "registry_reads": _rxs(env.get("registry_reads"), 0),
            "registry_path": env.get("registry_path"),
            "declaration": _rx(env["declaration"], 0) if env.get("declaration") else None,
            "entry": _rx(env["entry"], 0) if env.get("entry") else None,
            "registered_prefix": _rx(env["registered_prefix"], 0) if env.get("registered_prefix") else None,
            "skip_kinds": tuple(env.get("skip_kinds") or ()),
        },
        "magic_constants": {
            "any": _alternation([item["pattern"] for item in magic.get("patterns") or []], 0),
            "skip_kinds": tuple(magic.get("skip_kinds") or ()),
            "patterns": [NamedPattern(item["id"], _rx(item["pattern"], 0), item.get("why", ""),
                                      bool(item.get("outside_strings")))
                         for item in magic.get("patterns") or []],
        },
        "perf_claims": {
            "number": _rx(perf["number"]) if perf.get("number") else None,
            "memory": _rx(perf["memory"]) if perf.get("memory") else None,
            "not_a_claim": _rxs(perf.get("not_a_claim")),
            "evidence": [NamedPattern(item["id"], _rx(item["pattern"], re.IGNORECASE | re.MULTILINE), item.get("why", ""))
                         for item in perf.get("evidence") or []],
        },
        "ci": {
            "rocm": _rx(ci["rocm"]) if ci.get("rocm") else None,
            "infrastructure": _rx(ci["infrastructure"]) if ci.get("infrastructure") else None,
            "infrastructure_outcomes": tuple(ci.get("infrastructure_outcomes") or ()),
        },
        "prompt_injection": [NamedPattern(item["id"], _rx(item["pattern"]), item.get("why", ""))
                             for item in checks.get("prompt_injection") or []],
        "prompt_injection_ignore_lines": _rxs(checks.get("prompt_injection_ignore_lines")),
        "prompt_injection_any": _alternation([item["pattern"] for item in checks.get("prompt_injection") or []],
                                             re.IGNORECASE),
        "mori_symbols": {
            "root_module": mori.get("root_module"),
            "snapshot_source": mori.get("snapshot_source"),
            "package_roots": tuple(mori.get("package_roots") or ()),
            "skip_kinds": tuple(mori.get("skip_kinds") or ()),
        },
        "flags": {
            "dispatch_families": tuple(flag_settings.get("dispatch_families") or ()),
        },
        "deep_review": {
            "tiers": tuple(deep.get("tiers") or ()),
            "rules": tuple(deep.get("rules") or ()),
            "pr_types": tuple(deep.get("pr_types") or ()),
            "families": tuple(deep.get("families") or ()),
            "perf_claims": bool(deep.get("perf_claims")),
            "paths": PathTable(PathFact(PathPattern.parse(item["path"]), item.get("why", ""))
                               for item in deep.get("paths") or []),
            "product_lines": deep.get("product_lines"),
        },
        "reading_plan": {
            "always": tuple(reading.get("always") or ()),
            "deep": tuple(reading.get("deep") or ()),
            "with_rule": {rule: tuple(anchors) for rule, anchors in (reading.get("with_rule") or {}).items()},
            "only_when_touched": {anchor: {"pr_types": tuple(when.get("pr_types") or ()),
                                           "families": tuple(when.get("families") or ())}
                                  for anchor, when in (reading.get("only_when_touched") or {}).items()},
            "budget": float(reading.get("budget", 1.0)),
        },
        "version_skew": {"max_days": (checks.get("version_skew") or {}).get("max_days")},
    }
