"""Merge the candidate findings of a deep review's lens passes into one ordered list.

Lens files are ``{"pr": N, "lens": NAME, "findings": [...]}``; the validator's file is
``{"pr": N, "decisions": [...]}`` (see VALIDATOR_KEYS). Proximity alone never fuses two defects:
two candidates are one finding only when the validator says ``merge``, or when they cite the same
location and are near-duplicates (``near_duplicates``, thresholds in review-lenses.yaml's
``merge``). Candidates of one type citing one file within a few lines are listed as
``merge_candidates`` for the validator, who answers ``merge`` or ``keep_apart``. A merged finding
keeps the most severe candidate (then the best evidence) with its text, gathers every location
and lists every lens that raised it. Dropped candidates are kept in ``dropped`` with the
validator's reason. Output runs 🔴 → ⚠️ → 📝; within a severity it follows the lens names and
the candidates' order, so the same inputs always give the same file.
"""

import difflib
import json
import re
from dataclasses import dataclass, field

from . import report_format as fmt
from ..core.lenses import bundle_lenses
from .report_check import text_names_trigger

EVIDENCE = ("已验证", "推测", "未经验证")  # strongest first
TEXT_FIELDS = ("title", "problem", "impact", "action")
FINDING_KEYS = ("severity", "type", "title", "locations", "problem", "impact", "action", "evidence")
ACTIONS = ("keep", "downgrade", "drop", "merge", "keep_apart")
VALIDATOR_KEYS = ("lens", "index", "action", "severity", "evidence", "reason", "same_as", "apart_from")
# The decision fields that name other candidates: the action that requires each, then the others
# that allow it (a candidate can be downgraded and kept apart from a neighbour in one decision).
PARTNER_FIELDS = {"same_as": ("merge",), "apart_from": ("keep_apart", "keep", "downgrade", "merge")}
REFERENCE_FORM = '{"lens": "<lens>", "index": <n>} or a list of them'
DECISION_EXAMPLE = '{"lens": "kernel-contracts", "index": 0, "action": "keep"}'
LOCATION = re.compile(r"^(?P<file>\S+?)(?::(?P<line>\d+)(?:-(?P<end>\d+))?)?$")
# What near_duplicates ignores: paths (the location is compared on its own) and everything that
# is neither a letter, a digit nor a CJK character.
PATH_IN_TEXT = re.compile(r"[\w./@-]+\.(?:py|pyi|cu|cuh|h|hpp|cpp|cc|hip|yaml|yml|json|md|txt)(?::\d+(?:-\d+)?)?")
NOT_A_WORD_CHARACTER = re.compile(r"[\W_]+")
IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_.]*")


class FindingsError(ValueError):
    """Input files that break the schema; ``problems`` holds one line per error."""

    def __init__(self, problems):
        super().__init__(problems[0])
        self.problems = problems


@dataclass
class Candidate:
    lens: str
    index: int
    finding: dict
    order: int
    reasons: list = field(default_factory=list)

    @property
    def key(self):
        return (self.lens, self.index)


def finding_problems(finding, where, lens_field):
    """Schema problems of one finding, each ``WHERE.FIELD: problem``; ``lens_field`` is "lens" or "lenses"."""
    if not isinstance(finding, dict):
        return [f"{where}: not an object"]
    expected = set(FINDING_KEYS) | {lens_field}
    problems = [f"{where}.{key}: missing" for key in (*FINDING_KEYS, lens_field) if key not in finding]
    problems += [f"{where}.{key}: unknown field" for key in sorted(set(finding) - expected - {"sources", "validation"})]
    if problems:
        return problems
    if finding["severity"] not in fmt.SEVERITIES:
        problems.append(f"{where}.severity: {finding['severity']!r} is not one of {', '.join(fmt.SEVERITIES)}")
    if finding["type"] not in fmt.FINDING_TYPES:
        problems.append(f"{where}.type: {finding['type']!r} is not one of {', '.join(fmt.FINDING_TYPES)}")
    if finding["evidence"] not in EVIDENCE:
        problems.append(f"{where}.evidence: {finding['evidence']!r} is not one of {', '.join(EVIDENCE)}")
    for key in TEXT_FIELDS:
        if not isinstance(finding[key], str) or not finding[key].strip():
            problems.append(f"{where}.{key}: must be a non-empty string")
    if isinstance(finding["title"], str) and "**" in finding["title"]:
        problems.append(f"{where}.title: must be plain text (no **)")
    action = finding["action"]
    if isinstance(action, str) and action.strip() and not fmt.is_concrete_request(action):
        problems.append(f"{where}.action: must be a concrete request to the author ({fmt.ACTION_EXAMPLES})")
    locations = finding["locations"]
    if not isinstance(locations, list) or not locations:
        problems.append(f"{where}.locations: must be a non-empty list of \"path:line\" strings")
    else:
        problems += [f"{where}.locations[{position}]: {location!r} is not \"path:line\""
                     for position, location in enumerate(locations)
                     if not isinstance(location, str) or not LOCATION.match(location)]
    names = finding[lens_field]
    if lens_field == "lenses":
        if not isinstance(names, list) or not names or not all(isinstance(name, str) and name for name in names):
            problems.append(f"{where}.lenses: must be a non-empty list of lens names")
    elif not isinstance(names, str) or not names:
        problems.append(f"{where}.lens: must be the lens name")
    return problems


def load_json(path, what):
    """The JSON object in ``path``; FindingsError with one line otherwise."""
    try:
        with open(path, encoding="utf-8-sig") as handle:
            data = json.load(handle)
    except FileNotFoundError:
        raise FindingsError([f"{path}: no such {what}"]) from None
    except (OSError, UnicodeDecodeError) as error:
        raise FindingsError([f"{path}: cannot read the {what} ({type(error).__name__})"]) from None
    except json.JSONDecodeError as error:
        raise FindingsError([f"{path}: not JSON ({error.msg} at line {error.lineno})"]) from None
    if not isinstance(data, dict):
        raise FindingsError([f"{path}: the {what} must be a JSON object"])
    return data


def _envelope_problems(path, data, list_key, also=()):
    """(problems, usable) for a file's top level: its keys, the PR number and the list under ``list_key``."""
    problems = [f"{path}: {key}: missing" for key in ("pr", *also, list_key) if key not in data]
    if problems:
        return problems, False
    if not _is_int(data["pr"]):
        problems.append(f"{path}: pr: must be the PR number")
    if not isinstance(data[list_key], list):
        return problems + [f"{path}: {list_key}: must be a list"], False
    return problems, True


def lens_file_problems(path, data):
    problems, usable = _envelope_problems(path, data, "findings", also=("lens",))
    if not usable:
        return problems
    if not isinstance(data["lens"], str) or not data["lens"]:
        problems.append(f"{path}: lens: must be the lens name")
    for index, finding in enumerate(data["findings"]):
        where = f"{path}: findings[{index}]"
        found = finding_problems(finding, where, "lens")
        if not found and finding["lens"] != data["lens"]:
            found.append(f"{where}.lens: {finding['lens']!r} differs from the file's lens {data['lens']!r}")
        problems += found
    return problems


def validator_problems(path, data, candidates):
    """Schema problems of the validator's file, checked against the candidates it decides on.

    Each problem says what is accepted, so the file can be fixed from the message alone.
    """
    problems, usable = _envelope_problems(path, data, "decisions")
    if not usable:
        return problems
    seen = set()
    for position, decision in enumerate(data["decisions"]):
        where = f"{path}: decisions[{position}]"
        if not isinstance(decision, dict):
            problems.append(f"{where}: not an object; each decision is like {DECISION_EXAMPLE}")
            continue
        problems += [f"{where}.{key}: unknown field; a decision has {', '.join(VALIDATOR_KEYS)}"
                     for key in sorted(set(decision) - set(VALIDATOR_KEYS))]
        key = (decision.get("lens"), decision.get("index"))
        if not isinstance(key[0], str) or not _is_int(key[1]):
            problems.append(f"{where}: lens (a name) and index (a number) must say which candidate is decided, "
                            f"e.g. {DECISION_EXAMPLE}")
            continue
        candidate = candidates.get(key)
        if candidate is None:
            problems.append(f"{where}: no candidate finding {key[1]!r} in lens {key[0]!r}; index counts from 0 "
                            f"in that lens file ({_candidate_counts(candidates)})")
            continue
        if key in seen:
            problems.append(f"{where}: a second decision for lens {key[0]!r} finding {key[1]}; give one decision "
                            "per candidate (keep_apart and merge may list several others)")
        seen.add(key)
        action = decision.get("action")
        if action not in ACTIONS:
            problems.append(f"{where}.action: {action!r} is not one of {', '.join(ACTIONS)}")
            continue
        if action != "keep" and not (isinstance(decision.get("reason"), str) and decision["reason"].strip()):
            problems.append(f"{where}.reason: a {action} needs the reason (a non-empty string)")
        if "evidence" in decision and decision["evidence"] not in EVIDENCE:
            problems.append(f"{where}.evidence: {decision['evidence']!r} is not one of {', '.join(EVIDENCE)}")
        problems += _severity_problems(where, action, decision, candidate.finding["severity"])
        for partner_field, allowed in PARTNER_FIELDS.items():
            if partner_field in decision and action not in allowed:
                problems.append(f"{where}.{partner_field}: not allowed with {action}; it goes with "
                                f"{' or '.join(allowed)}")
            elif partner_field in decision or action == allowed[0]:
                references = _references(decision.get(partner_field))
                if references is None or not references or any(
                        reference not in candidates or reference == key for reference in references):
                    problems.append(f"{where}.{partner_field}: names other candidates as "
                                    f"{REFERENCE_FORM} ({_candidate_counts(candidates)})")
    if problems:
        return problems
    dropped = {(d["lens"], d["index"]) for d in data["decisions"] if d["action"] == "drop"}
    for position, decision in enumerate(data["decisions"]):
        for partner_field in PARTNER_FIELDS:
            problems += [f"{path}: decisions[{position}].{partner_field}: names lens {lens!r} finding {index}, "
                         "which is dropped; name a candidate that stays"
                         for lens, index in _references(decision.get(partner_field, [])) if (lens, index) in dropped]
    for candidate in candidates.values():
        if candidate.finding["severity"] != "📝" and candidate.key not in seen:
            problems.append(f"{path}: decisions: no decision for lens {candidate.lens!r} finding {candidate.index} "
                            f"({candidate.finding['severity']} {candidate.finding['title']}); every 🔴/⚠️ needs one "
                            f"of {', '.join(ACTIONS)}")
    return problems


def _severity_problems(where, action, decision, current):
    """``severity`` is allowed on any decision: lower than the candidate's on a downgrade, equal otherwise."""
    if action != "downgrade" and "severity" not in decision:
        return []
    severity = decision.get("severity")
    lower = fmt.SEVERITIES[_rank(current) + 1:]
    if action == "downgrade":
        if severity in lower:
            return []
        if not lower:
            return [f"{where}.action: a 📝 finding cannot be downgraded; use keep or drop"]
        return [f"{where}.severity: a downgrade of a {current} finding needs a lower severity: {' or '.join(lower)}"]
    if severity == current:
        return []
    hint = (f"; to lower it use action downgrade with {' or '.join(lower)}" if severity in lower else "")
    return [f"{where}.severity: a {action} keeps the candidate's severity {current}; give {current} or omit it{hint}"]


def _references(value):
    """The (lens, index) pairs of ``same_as``/``apart_from`` (one object or a list), or None when malformed.

    Other keys are ignored, so an entry copied from ``merge_candidates`` works as it is.
    """
    items = value if isinstance(value, list) else [value]
    pairs = []
    for item in items:
        if not isinstance(item, dict) or not isinstance(item.get("lens"), str) or not _is_int(item.get("index")):
            return None
        pairs.append((item["lens"], item["index"]))
    return pairs


def _candidate_counts(candidates):
    counts = {}
    for lens, _ in candidates:
        counts[lens] = counts.get(lens, 0) + 1
    return "candidates: " + ", ".join(f"{lens} 0-{count - 1}" for lens, count in counts.items()) if counts else "no candidates"


def merge(lens_documents, validator=None, settings=None):
    """The merged findings document from ``[(path, lens_document)]`` and ``(path, validator_document)``.

    ``settings`` (a core.lenses.MergeSettings) defaults to the bundle's lens file.
    Raises FindingsError listing every schema problem, one line each.
    """
    settings = settings or bundle_lenses().merge
    problems = []
    for path, data in lens_documents:
        problems += lens_file_problems(path, data)
    if problems:
        raise FindingsError(problems)
    by_lens = {}
    for path, data in lens_documents:
        if data["lens"] in by_lens:
            problems.append(f"{path}: lens: {data['lens']!r} is also the lens of {by_lens[data['lens']][0]}")
        by_lens.setdefault(data["lens"], (path, data))
    numbers = sorted({data["pr"] for _, data in lens_documents})
    if len(numbers) > 1:
        problems.append(f"the lens files are about different PRs ({', '.join(map(str, numbers))})")
    elif validator and _is_int(validator[1].get("pr")) and validator[1]["pr"] != numbers[0]:
        problems.append(f"{validator[0]}: pr: {validator[1]['pr']} differs from the lens files' PR {numbers[0]}")
    if problems:
        raise FindingsError(problems)
    candidates = {}
    for lens in sorted(by_lens):
        for index, finding in enumerate(by_lens[lens][1]["findings"]):
            candidates[(lens, index)] = Candidate(lens, index, dict(finding), len(candidates))
    dropped, links, apart = {}, [], set()
    if validator:
        problems = validator_problems(validator[0], validator[1], candidates)
        if problems:
            raise FindingsError(problems)
        dropped, links, apart = _apply(validator[1]["decisions"], candidates)
    kept = [candidate for candidate in candidates.values() if candidate.key not in dropped]
    links += [(first.key, second.key) for first, second in _pairs(kept)
              if frozenset((first.key, second.key)) not in apart and _shares_location(first.finding, second.finding)
              and near_duplicates(first.finding, second.finding, settings.same_text)]
    groups = _group(kept, links)
    problems = _apart_but_joined(groups, apart, validator[0] if validator else "")
    if problems:
        raise FindingsError(problems)
    group_of = {candidate.key: position for position, group in enumerate(groups) for candidate in group}
    proposals = [_proposal(first, second) for first, second in _pairs(kept)
                 if group_of[first.key] != group_of[second.key] and frozenset((first.key, second.key)) not in apart
                 and first.finding["type"] == second.finding["type"]
                 and _nearby(first.finding, second.finding, settings.nearby_lines)]
    merged = sorted((_merged(group) for group in groups), key=lambda item: (_rank(item[1]["severity"]), item[0]))
    findings = [finding for _, finding in merged]
    problems = [f"merged finding {finding['title']!r}: a 🔴 must name its trigger (shape, dtype, arch, TP/EP, "
                f"a VLLM_…=1 setting or a model) in its title, problem or impact; name it or downgrade it to ⚠️"
                for finding in findings if finding["severity"] == "🔴"
                and not text_names_trigger(" ".join(finding[key] for key in ("title", "problem", "impact")))]
    if problems:
        raise FindingsError(problems)
    return {"pr": numbers[0], "lenses": sorted(by_lens), "findings": findings, "merge_candidates": proposals,
            "dropped": [dropped[key] for key in sorted(dropped, key=lambda key: candidates[key].order)]}


def near_duplicates(first, second, threshold):
    """True when two findings say the same thing: the documented test of review-lenses.yaml's ``merge``.

    Their title + problem, lower-cased with paths, punctuation and spaces removed, reach a
    difflib ratio of ``threshold``; and neither title names an identifier (a word with ``_`` or a
    digit, or in capitals, such as ``ROCM_AITER_FA`` or ``gfx950``) absent from the other
    finding's title and problem, so the same sentence about two backends stays two findings.
    """
    texts = sorted(_comparable(finding) for finding in (first, second))
    if difflib.SequenceMatcher(None, texts[0], texts[1], autojunk=False).ratio() < threshold:
        return False
    for one, other in ((first, second), (second, first)):
        if _identifiers(one["title"]) - _identifiers(f"{other['title']} {other['problem']}"):
            return False
    return True


def _comparable(finding):
    text = PATH_IN_TEXT.sub(" ", f"{finding['title']} {finding['problem']}".lower())
    return NOT_A_WORD_CHARACTER.sub("", text)


def _identifiers(text):
    words = (word.strip(".") for word in IDENTIFIER.findall(PATH_IN_TEXT.sub(" ", text)))
    return {word.lower() for word in words
            if "_" in word or any(ch.isdigit() for ch in word) or (len(word) > 1 and word.isupper())}


def merged_document_problems(path, data):
    """Schema problems of a merged findings file (what triage's --findings reads)."""
    problems, usable = _envelope_problems(path, data, "findings")
    if not usable:
        return problems
    for index, finding in enumerate(data["findings"]):
        problems += finding_problems(finding, f"{path}: findings[{index}]", "lenses")
    proposals = data.get("merge_candidates", [])
    if not isinstance(proposals, list) or not all(
            isinstance(pair, dict) and isinstance(pair.get("candidates"), list) and len(pair["candidates"]) == 2
            and all(isinstance(item, dict) and {"lens", "index", "title"} <= set(item) for item in pair["candidates"])
            for pair in proposals):
        problems.append(f"{path}: merge_candidates: must be a list of {{\"candidates\": [two {{lens, index, title}}]}}")
    ranks = [_rank(finding["severity"]) for finding in data["findings"]
             if isinstance(finding, dict) and finding.get("severity") in fmt.SEVERITIES]
    if ranks != sorted(ranks):
        problems.append(f"{path}: findings: not sorted 🔴 → ⚠️ → 📝 (re-create it with scripts/merge_findings.py)")
    return problems


def _apply(decisions, candidates):
    """(dropped, merge links, kept-apart pairs) from the decisions; severity and evidence applied in place."""
    dropped, links, apart = {}, [], set()
    for decision in decisions:
        candidate = candidates[(decision["lens"], decision["index"])]
        action = decision["action"]
        if decision.get("evidence"):
            candidate.finding["evidence"] = decision["evidence"]
        if action == "drop":
            dropped[candidate.key] = {"lens": candidate.lens, "index": candidate.index,
                                      "severity": candidate.finding["severity"], "title": candidate.finding["title"],
                                      "reason": decision["reason"].strip()}
            continue
        if action == "downgrade":
            candidate.finding["severity"] = decision["severity"]
        if action == "merge":
            links += [(candidate.key, other) for other in _references(decision["same_as"])]
        apart |= {frozenset((candidate.key, other)) for other in _references(decision.get("apart_from", []))}
        if decision.get("reason"):
            candidate.reasons.append({"lens": candidate.lens, "index": candidate.index, "action": action,
                                      "reason": decision["reason"].strip()})
    return dropped, links, apart


def _pairs(candidates):
    for position, first in enumerate(candidates):
        for second in candidates[position + 1:]:
            yield first, second


def _group(candidates, links):
    """Connected groups of same-finding candidates (union-find over ``links``), each in candidate order."""
    parent = {candidate.key: candidate.key for candidate in candidates}
    order = {candidate.key: candidate.order for candidate in candidates}

    def root(key):
        while parent[key] != key:
            parent[key] = parent[parent[key]]
            key = parent[key]
        return key

    for first, second in links:
        first, second = root(first), root(second)
        if first != second:
            parent[max(first, second, key=order.get)] = min(first, second, key=order.get)
    groups = {}
    for candidate in candidates:
        groups.setdefault(root(candidate.key), []).append(candidate)
    return list(groups.values())


def _apart_but_joined(groups, apart, path):
    """A kept-apart pair that merges (through a third candidate) still join: the decisions contradict."""
    problems = []
    for group in groups:
        keys = [candidate.key for candidate in group]
        for position, first in enumerate(keys):
            for second in keys[position + 1:]:
                if frozenset((first, second)) in apart:
                    problems.append(f"{path}: decisions: lens {first[0]!r} finding {first[1]} and lens {second[0]!r} "
                                    f"finding {second[1]} are kept apart, but merges join them; change one merge")
    return problems


def _shares_location(first, second):
    """Both cite one file at overlapping lines (or both cite the file without a line)."""
    return _nearby(first, second, 0)


def _nearby(first, second, window):
    """Both cite one file within ``window`` lines (or both cite the file without a line)."""
    for one in map(_span, first["locations"]):
        for other in map(_span, second["locations"]):
            if one[0] != other[0] or (one[1] is None) != (other[1] is None):
                continue
            if one[1] is None or max(one[1], other[1]) - min(one[2], other[2]) <= window:
                return True
    return False


def _span(location):
    """(file, first line, last line) of a location; the lines are None without a line."""
    match = LOCATION.match(location)
    if not match.group("line"):
        return match.group("file"), None, None
    start = int(match.group("line"))
    return match.group("file"), start, max(start, int(match.group("end") or start))


def _proposal(first, second):
    """A merge candidate the validator decides: the two candidates and where each is."""
    return {"candidates": [{"lens": candidate.lens, "index": candidate.index,
                            "severity": candidate.finding["severity"], "title": candidate.finding["title"],
                            "locations": candidate.finding["locations"]} for candidate in (first, second)],
            "type": first.finding["type"], "decide": "merge or keep_apart"}


def _merged(group):
    """(sort key, merged finding): the most severe candidate, then the best evidence, then the first."""
    primary = min(group, key=lambda c: (_rank(c.finding["severity"]), EVIDENCE.index(c.finding["evidence"]), c.order))
    finding = {key: primary.finding[key] for key in FINDING_KEYS}
    finding["locations"] = list(dict.fromkeys(location for candidate in [primary, *group]
                                              for location in candidate.finding["locations"]))
    finding["lenses"] = list(dict.fromkeys(candidate.lens for candidate in group))
    finding["sources"] = [{"lens": candidate.lens, "index": candidate.index} for candidate in group]
    reasons = [reason for candidate in group for reason in candidate.reasons]
    if reasons:
        finding["validation"] = reasons
    return group[0].order, finding


def _rank(severity):
    return fmt.SEVERITIES.index(severity)


def _is_int(value):
    return isinstance(value, int) and not isinstance(value, bool)
