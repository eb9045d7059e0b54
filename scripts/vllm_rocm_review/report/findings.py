"""Merge the candidate findings of a deep review's lens passes into one ordered list.

Lens files are ``{"pr": N, "lens": NAME, "findings": [...]}``; the validator's file is
``{"pr": N, "decisions": [...]}`` (see VALIDATOR_KEYS). Two candidates are the same finding when
they share a type and cite the same file within LINE_WINDOW lines, or when the validator merges
them; the merged finding keeps the most severe candidate (then the best evidence) with its
text, gathers every location and lists every lens that raised it. Dropped candidates are kept
in ``dropped`` with the validator's reason. Output runs 🔴 → ⚠️ → 📝; within a severity it
follows the lens names and the candidates' order, so the same inputs always give the same file.
"""

import json
import re
from dataclasses import dataclass, field

from . import report_format as fmt
from .report_check import text_names_trigger

LINE_WINDOW = 5
EVIDENCE = ("已验证", "推测", "未经验证")  # strongest first
TEXT_FIELDS = ("title", "problem", "impact", "action")
FINDING_KEYS = ("severity", "type", "title", "locations", "problem", "impact", "action", "evidence")
ACTIONS = ("keep", "downgrade", "drop", "merge")
VALIDATOR_KEYS = {"lens", "index", "action", "severity", "evidence", "reason", "same_as"}
LOCATION = re.compile(r"^(?P<file>\S+?)(?::(?P<line>\d+)(?:-(?P<end>\d+))?)?$")


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
    """Schema problems of the validator's file, checked against the candidates it decides on."""
    problems, usable = _envelope_problems(path, data, "decisions")
    if not usable:
        return problems
    seen = set()
    for position, decision in enumerate(data["decisions"]):
        where = f"{path}: decisions[{position}]"
        if not isinstance(decision, dict):
            problems.append(f"{where}: not an object")
            continue
        problems += [f"{where}.{key}: unknown field" for key in sorted(set(decision) - VALIDATOR_KEYS)]
        key = (decision.get("lens"), decision.get("index"))
        if not isinstance(key[0], str) or not _is_int(key[1]):
            problems.append(f"{where}: lens (a name) and index (a number) must say which candidate is decided")
            continue
        candidate = candidates.get(key)
        if candidate is None:
            problems.append(f"{where}: no candidate finding {key[1]!r} in lens {key[0]!r}")
            continue
        if key in seen:
            problems.append(f"{where}: a second decision for lens {key[0]!r} finding {key[1]}")
        seen.add(key)
        action = decision.get("action")
        if action not in ACTIONS:
            problems.append(f"{where}.action: {action!r} is not one of {', '.join(ACTIONS)}")
            continue
        if action != "keep" and not (isinstance(decision.get("reason"), str) and decision["reason"].strip()):
            problems.append(f"{where}.reason: a {action} needs the reason")
        if "evidence" in decision and decision["evidence"] not in EVIDENCE:
            problems.append(f"{where}.evidence: {decision['evidence']!r} is not one of {', '.join(EVIDENCE)}")
        if action == "downgrade":
            severity = decision.get("severity")
            current = candidate.finding["severity"]
            if severity not in fmt.SEVERITIES or _rank(severity) <= _rank(current):
                problems.append(f"{where}.severity: a downgrade of a {current} finding needs a lower severity")
        elif "severity" in decision:
            problems.append(f"{where}.severity: only a downgrade changes the severity")
        if action == "merge":
            target = decision.get("same_as")
            target_key = (target.get("lens"), target.get("index")) if isinstance(target, dict) else None
            if not (target_key and isinstance(target_key[0], str) and _is_int(target_key[1])) \
                    or target_key not in candidates or target_key == key:
                problems.append(f"{where}.same_as: must be {{\"lens\": …, \"index\": …}} of another candidate")
        elif "same_as" in decision:
            problems.append(f"{where}.same_as: only a merge names another finding")
    dropped = {(d.get("lens"), d.get("index")) for d in data["decisions"] if isinstance(d, dict) and d.get("action") == "drop"}
    for position, decision in enumerate(data["decisions"]):
        if isinstance(decision, dict) and decision.get("action") == "merge" and isinstance(decision.get("same_as"), dict):
            if (decision["same_as"].get("lens"), decision["same_as"].get("index")) in dropped:
                problems.append(f"{path}: decisions[{position}].same_as: names a dropped finding")
    for candidate in candidates.values():
        if candidate.finding["severity"] != "📝" and candidate.key not in seen:
            problems.append(f"{path}: decisions: no decision for lens {candidate.lens!r} finding {candidate.index} "
                            f"({candidate.finding['severity']} {candidate.finding['title']})")
    return problems


def merge(lens_documents, validator=None):
    """The merged findings document from ``[(path, lens_document)]`` and ``(path, validator_document)``.

    Raises FindingsError listing every schema problem, one line each.
    """
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
    dropped, links = {}, []
    if validator:
        problems = validator_problems(validator[0], validator[1], candidates)
        if problems:
            raise FindingsError(problems)
        dropped, links = _apply(validator[1]["decisions"], candidates)
    groups = _group([candidate for candidate in candidates.values() if candidate.key not in dropped], links)
    merged = sorted((_merged(group) for group in groups), key=lambda item: (_rank(item[1]["severity"]), item[0]))
    findings = [finding for _, finding in merged]
    problems = [f"merged finding {finding['title']!r}: a 🔴 must name its trigger (shape, dtype, arch, TP/EP, "
                f"a VLLM_…=1 setting or a model) in its title, problem or impact; name it or downgrade it to ⚠️"
                for finding in findings if finding["severity"] == "🔴"
                and not text_names_trigger(" ".join(finding[key] for key in ("title", "problem", "impact")))]
    if problems:
        raise FindingsError(problems)
    return {"pr": numbers[0], "lenses": sorted(by_lens), "findings": findings,
            "dropped": [dropped[key] for key in sorted(dropped, key=lambda key: candidates[key].order)]}


def merged_document_problems(path, data):
    """Schema problems of a merged findings file (what triage's --findings reads)."""
    problems, usable = _envelope_problems(path, data, "findings")
    if not usable:
        return problems
    for index, finding in enumerate(data["findings"]):
        problems += finding_problems(finding, f"{path}: findings[{index}]", "lenses")
    ranks = [_rank(finding["severity"]) for finding in data["findings"]
             if isinstance(finding, dict) and finding.get("severity") in fmt.SEVERITIES]
    if ranks != sorted(ranks):
        problems.append(f"{path}: findings: not sorted 🔴 → ⚠️ → 📝 (re-create it with scripts/merge_findings.py)")
    return problems


def location_parts(location):
    """(file, first line or None) of a ``path:line`` location."""
    match = LOCATION.match(location)
    return match.group("file"), (int(match.group("line")) if match.group("line") else None)


def _apply(decisions, candidates):
    dropped, links = {}, []
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
            links.append((candidate.key, (decision["same_as"]["lens"], decision["same_as"]["index"])))
        if decision.get("reason"):
            candidate.reasons.append({"lens": candidate.lens, "index": candidate.index, "action": action,
                                      "reason": decision["reason"].strip()})
    return dropped, links


def _group(candidates, links):
    """Connected groups of same-finding candidates (union-find), each in candidate order."""
    parent = {candidate.key: candidate.key for candidate in candidates}

    def root(key):
        while parent[key] != key:
            parent[key] = parent[parent[key]]
            key = parent[key]
        return key

    def join(first, second):
        first, second = root(first), root(second)
        if first != second:
            parent[max(first, second, key=order.get)] = min(first, second, key=order.get)

    order = {candidate.key: candidate.order for candidate in candidates}
    for position, first in enumerate(candidates):
        for second in candidates[position + 1:]:
            if _same_place_and_type(first.finding, second.finding):
                join(first.key, second.key)
    for first, second in links:
        join(first, second)
    groups = {}
    for candidate in candidates:
        groups.setdefault(root(candidate.key), []).append(candidate)
    return list(groups.values())


def _same_place_and_type(first, second):
    if first["type"] != second["type"]:
        return False
    for one in map(location_parts, first["locations"]):
        for other in map(location_parts, second["locations"]):
            if one[0] == other[0] and (one[1] is None) == (other[1] is None) and \
                    (one[1] is None or abs(one[1] - other[1]) <= LINE_WINDOW):
                return True
    return False


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
