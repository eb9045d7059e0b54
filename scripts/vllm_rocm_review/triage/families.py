"""PR types and diff families -> the rules a review must apply (seed step 4).

A PR type matches changed paths or the title/body; a diff family matches the PR's added
and removed lines (or a detector's analysis). Each rule keeps the types and families
that derived it, so the reviewer sees why it is there.

Lines moved verbatim (removed in one place, added elsewhere in the same PR) are neither
"new" nor "removed": families see only net lines, and an ``added``/``removed`` pattern
fires only when it occurs more often on that side of the file's diff than on the other.
Scope follows the gate: full PRs use every file, partial PRs only the ROCm and shared
files (``generic`` families, such as housekeeping, always see every file), and a PR
with no ROCm relevance keeps only housekeeping.
"""

from dataclasses import dataclass, field

from .detectors import run_detector
from ..core.diff_parse import normalize
from .relevance import clean_body

ALWAYS_RULE = "HK"
EVIDENCE_PER_FILE = 3
EVIDENCE_PER_FAMILY = 6


@dataclass
class NetLines:
    """One file's net added/removed lines (moved lines dropped), with and without comments.

    ``*_text`` joins a side into one string so a pattern can be ruled out with a single
    search before the per-line pass (family patterns are compiled with re.MULTILINE).
    ``all_added_text`` holds every added line, ``visible_text`` added plus context lines.
    """

    added: list
    removed: list
    added_code: list
    removed_code: list
    all_added_text: str
    visible_text: str

    def __post_init__(self):
        self.added_text = "\n".join(text for _, text in self.added)
        self.removed_text = "\n".join(text for _, text in self.removed)
        self.added_code_text = "\n".join(text for _, text in self.added_code)
        self.removed_code_text = "\n".join(text for _, text in self.removed_code)


@dataclass
class DiffContext:
    """What families and detectors look at for one PR."""

    config: object
    diffs: list
    scope_diffs: list
    shared_files: list
    text: str
    added_keys: set
    removed_keys: set
    net_cache: dict = field(default_factory=dict)
    files_cache: dict = field(default_factory=dict)

    def files_for(self, family):
        """The files a family may look at; families with the same filters share one pass."""
        key = (family.generic, family.paths, family.exclude_paths, family.skip_kinds)
        files = self.files_cache.get(key)
        if files is None:
            candidates = self.diffs if family.generic else self.scope_diffs
            files = [diff for diff in candidates if family.applies_to_path(diff.path, self.config.file_kinds(diff.path))]
            self.files_cache[key] = files
        return files

    def net(self, diff):
        """NetLines of ``diff``, computed once per file."""
        cached = self.net_cache.get(diff.path)
        if cached is None:
            added = [(n, t) for n, t in diff.added if t.strip() and normalize(t) not in self.removed_keys]
            removed = [(n, t) for n, t in diff.removed if t.strip() and normalize(t) not in self.added_keys]
            all_added = "\n".join(text for _, text in diff.added)
            cached = NetLines(added, removed, [(n, t) for n, t in added if not diff.is_comment(t)],
                              [(n, t) for n, t in removed if not diff.is_comment(t)], all_added,
                              all_added + "\n" + "\n".join(text for _, text in diff.context))
            self.net_cache[diff.path] = cached
        return cached


def build_context(config, pr, diffs, relevance_level, rocm_files, shared_files):
    exposed = {entry["path"] for entry in rocm_files + shared_files}
    if relevance_level == "full":
        scope = list(diffs)
    elif relevance_level == "partial":
        scope = [diff for diff in diffs if diff.path in exposed]
    else:
        scope = []
    text = f"{pr.get('title') or ''}\n{clean_body(config, pr.get('body'))}"
    added_keys = {normalize(text_) for diff in diffs for _, text_ in diff.added}
    removed_keys = {normalize(text_) for diff in diffs for _, text_ in diff.removed}
    return DiffContext(config, diffs, scope, shared_files, text, added_keys, removed_keys)


def match_pr_types(config, context, relevance_level):
    """PR types whose paths or text match; the ``always`` type in every case."""
    matched = []
    for pr_type in config.pr_types:
        hits = []
        if pr_type.always:
            hits.append("always")
        elif relevance_level != "none":
            paths = [diff.path for diff in context.scope_diffs
                     if any(regex.search(diff.path) for regex in pr_type.paths)]
            hits.extend(paths)
            text_hit = next((m for regex in pr_type.text if (m := regex.search(context.text))), None)
            if text_hit:
                hits.append(f"title/body: {text_hit.group(0)!r}")
        if hits:
            matched.append({"id": pr_type.id, "label": pr_type.label, "rules": list(pr_type.rules), "matched": hits})
    return matched


def derive_families(config, context, relevance_level):
    """Families that fire, each with up to EVIDENCE_PER_FAMILY evidence items."""
    fired = []
    for family in config.families:
        if relevance_level == "none" and not family.generic:
            continue
        evidence = _family_evidence(family, context, relevance_level)
        if evidence:
            fired.append({"id": family.id, "why": family.why, "rules": list(family.rules),
                          "evidence": evidence[:EVIDENCE_PER_FAMILY]})
    return fired


def _family_evidence(family, context, relevance_level):
    evidence = []
    if family.text and relevance_level != "none":
        for regex in family.text:
            match = regex.search(context.text)
            if match:
                evidence.append({"path": None, "line": None, "text": f"title/body: {match.group(0)}"})
                break
    files = context.files_for(family)
    if family.detector:
        evidence.extend(run_detector(family.detector, family, context, files))
    if family.added or family.removed or family.changed or family.new_file or family.touched:
        for diff in files:
            evidence.extend(_file_evidence(family, diff, context))
    return evidence


def _file_evidence(family, diff, context):
    if family.touched:
        return [{"path": diff.path, "line": None, "text": f"{diff.status} file"}]
    if family.new_file:
        return [{"path": diff.path, "line": None, "text": "new file"}] if diff.status == "added" else []
    net = context.net(diff)
    if family.unless_in_file and any(regex.search(net.all_added_text) for regex in family.unless_in_file):
        return []
    if family.with_in_file and not any(regex.search(net.visible_text) for regex in family.with_in_file):
        return []
    if family.include_comments:
        added, removed, added_text, removed_text = net.added, net.removed, net.added_text, net.removed_text
    else:
        added, removed = net.added_code, net.removed_code
        added_text, removed_text = net.added_code_text, net.removed_code_text
    scan_added = family.any_added is not None and family.any_added.search(added_text)
    scan_removed = family.any_removed is not None and family.any_removed.search(removed_text)
    if not (scan_added or scan_removed):
        return []
    if family.outside_strings:
        def matches(regex, text):
            return diff.code_match(regex, text) is not None
    else:
        def matches(regex, text):
            return regex.search(text) is not None
    hits = []
    for regex in family.added:
        if regex.search(added_text):
            hits.extend(_one_sided(matches, regex, added, removed if regex.search(removed_text) else []))
    for regex in family.removed:
        if regex.search(removed_text):
            hits.extend(_one_sided(matches, regex, removed, added if regex.search(added_text) else [],
                                   prefix="removed: "))
    for regex in family.changed:
        if regex.search(added_text):
            hits.extend((number, text) for number, text in added if matches(regex, text))
        if regex.search(removed_text):
            hits.extend((number, "removed: " + text) for number, text in removed if matches(regex, text))
    unique = sorted(set(hits), key=lambda hit: (hit[0], hit[1]))
    return [{"path": diff.path, "line": number, "text": text.strip()[:160]} for number, text in unique[:EVIDENCE_PER_FILE]]


def _one_sided(matches, regex, side, other, prefix=""):
    """Lines of ``side`` matching ``regex``, when they outnumber the matches on the ``other`` side."""
    hits = [(number, prefix + text) for number, text in side if matches(regex, text)]
    others = sum(1 for _, text in other if matches(regex, text))
    return hits if len(hits) > others else []


def collect_rules(config, pr_types, families, relevance_level):
    """Rule IDs with their sources, in catalog order; judgment rules listed apart."""
    sources = {}
    for pr_type in pr_types:
        for rule in pr_type["rules"]:
            sources.setdefault(rule, []).append({"via": "type", "id": pr_type["id"]})
    for family in families:
        for rule in family["rules"]:
            sources.setdefault(rule, []).append({"via": "family", "id": family["id"]})
    skipped = []
    if relevance_level == "none":
        skipped = sorted(rule for rule in sources if rule != ALWAYS_RULE)
        sources = {rule: found for rule, found in sources.items() if rule == ALWAYS_RULE}
    sources.setdefault(ALWAYS_RULE, [{"via": "always", "id": ALWAYS_RULE}])
    rules = [{"id": rule, "sources": sources[rule]} for rule in sorted(sources, key=rule_sort_key)]
    judgment = [] if relevance_level == "none" else [
        {"id": rule, "why": why} for rule, why in config.judgment_rules if rule not in sources]
    return rules, judgment, skipped


def has_diff_evidence(rule):
    """Is the rule's body worth reading in full: a diff family derived it, or it always applies?"""
    return rule["id"] == ALWAYS_RULE or any(source["via"] == "family" for source in rule["sources"])


CATEGORY_ORDER = ("A", "B", "C", "D", "E", "F", "G", "P", "V", "HK")


def rule_sort_key(rule_id):
    """Catalog order: category (A … V, then HK), number, then suffix (D1 < D1b < D2)."""
    if rule_id == "HK":
        return (len(CATEGORY_ORDER) - 1, 0, "")
    letter, rest = rule_id[0], rule_id[1:]
    digits = "".join(ch for ch in rest if ch.isdigit())
    suffix = rest[len(digits):]
    position = CATEGORY_ORDER.index(letter) if letter in CATEGORY_ORDER else len(CATEGORY_ORDER)
    return (position, int(digits or 0), suffix)
