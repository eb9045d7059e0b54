"""Structural analyses of a diff that one regex per line cannot express.

A diff family in the YAML names one of these with ``detector:``; each gets the files the
family may look at (its paths and kinds applied to the PR's scope) and returns evidence
items ({path, line, text}), empty when the family does not fire. They know Python syntax,
never vLLM: paths, groups and patterns come from the family's ``params``, the gate or the
surface file's ``checks``.
"""

import re
from collections import defaultdict

from ..core.diff_parse import normalize
from .mechanical import scan_env_vars
from .path_patterns import PathPattern

DEF_LINE = re.compile(r"^\s*(?:async\s+)?def\s+(\w+)\s*\(")
PARAM_LINE = re.compile(r"^\s+\*{0,2}[A-Za-z_]\w*\s*(?::[^=]+)?(?:=\s*[^=].*)?,?\s*$")
CLASS_LINE = re.compile(r"^\s*class\s+\w+")
SIGNATURE_END = re.compile(r"^\s*\)\s*(?:->.*)?:\s*$")
BRANCH_START = re.compile(r"^(\s*)(if|elif)\b.*:\s*(#.*)?$")
ELSE_LINE = re.compile(r"^(\s*)(elif\b.*|else\s*):\s*(#.*)?$")
ASSIGNMENT = re.compile(r"^\s*([A-Za-z_][\w, ]*?)\s*(?::[^=]+)?(?<![=!<>+\-*/%&|^])=(?!=)")
PY_SUFFIXES = (".py", ".pyi")
IDENTIFIER = re.compile(r"[A-Za-z_]\w*")
LOOKAHEAD_LINES = 25
MAX_EVIDENCE = 5


def run_detector(name, family, context, files):
    """Evidence for detector ``name`` over ``files``; ``context`` carries the whole PR and the gate."""
    return DETECTORS[name](family, context, files)[:MAX_EVIDENCE]


def _item(path, line, text):
    return {"path": path, "line": line, "text": text.strip()[:160]}


def signature_change(family, context, files):
    """A def line changed, or a parameter added/removed inside a visible def signature."""
    found = []
    for diff in files:
        if not diff.path.endswith(PY_SUFFIXES):
            continue
        removed_defs = {match.group(1) for _, text in diff.removed if (match := DEF_LINE.match(text))}
        for number, text in diff.added:
            match = DEF_LINE.match(text)
            if match and match.group(1) in removed_defs:
                found.append(_item(diff.path, number, text))
        found.extend(_parameter_edits(diff))
    return found


def _parameter_edits(diff):
    """Added parameter lines inside the signature of an existing def (its def line unchanged).

    The parameter list must close with ``) -> ...:`` or ``):``; walking back over
    parameter lines must reach a def line that is context, or the hunk's enclosing def.
    New functions and class base lists are not signature changes.
    """
    view = diff.new_view()
    found = []
    for index, (number, text, is_added) in enumerate(view):
        if not is_added or not PARAM_LINE.match(text) or DEF_LINE.match(text):
            continue
        if not _closes_signature(view, index):
            continue
        function = _existing_def(view, index, diff)
        if function:
            found.append(_item(diff.path, number, f"{function}: {text.strip()}"))
    return found


def _closes_signature(view, index):
    number = view[index][0]
    for later_number, later_text, _ in view[index + 1:index + 40]:
        if later_number - number > 40:
            return False
        if SIGNATURE_END.match(later_text):
            return True
        if not PARAM_LINE.match(later_text):
            return False
        number = later_number
    return False


def _existing_def(view, index, diff):
    """Name of the def whose parameter list holds view[index], when that def line is not new."""
    number = view[index][0]
    for earlier_number, text, is_added in reversed(view[:index]):
        if earlier_number != number - 1:
            break
        number = earlier_number
        match = DEF_LINE.match(text)
        if match:
            return None if is_added else match.group(1)
        if CLASS_LINE.match(text):
            return None
        if not PARAM_LINE.match(text):
            return None
    for start, section in reversed(diff.hunk_sections):
        if start <= view[index][0]:
            match = DEF_LINE.match(section)
            return match.group(1) if match and number == start else None
    return None


def conditional_binding(family, context, files):
    """A name bound only inside some branches of an added if/elif chain, then used after it."""
    found = []
    for diff in files:
        if diff.path.endswith(PY_SUFFIXES):
            found.extend(_conditional_bindings(diff))
    return found


def _indent(text):
    return len(text) - len(text.lstrip())


def _conditional_bindings(diff):
    view = diff.new_view()
    first_seen = {}
    for index, (_, text, _) in enumerate(view):
        for name in IDENTIFIER.findall(text):
            first_seen.setdefault(name, index)
    found = []
    for index, (number, text, is_added) in enumerate(view):
        start = BRANCH_START.match(text)
        if not is_added or not start or start.group(2) != "if":
            continue
        indent = len(start.group(1))
        branches, has_else, end = _branch_chain(view, index, indent)
        bound_everywhere = set.intersection(*branches) if has_else else set()
        for name in sorted(set().union(*branches) - bound_everywhere):
            if first_seen[name] < index:
                continue  # seen before the chain: a parameter or an earlier binding
            use = re.compile(rf"(?<![\w.]){re.escape(name)}\b")
            for later_number, later_text, _ in view[end:end + LOOKAHEAD_LINES]:
                if later_text.strip() and _indent(later_text) < indent:
                    break
                if name in _bound_names(later_text.split("#", 1)[0]) or _loop_binds(later_text, name):
                    break  # rebound before any use
                if use.search(later_text):
                    found.append(_item(diff.path, later_number,
                                       f"{name} (bound only in some branches from line {number}): {later_text}"))
                    break
    return found


def _branch_chain(view, index, indent):
    """Names bound per branch of the if/elif/else chain at ``index``; whether it ends in else.

    Only statements count: lines inside an open bracket (keyword arguments of a call) are
    skipped, and the chain stops at the first gap in the visible lines rather than guess.
    """
    branches = [set()]
    has_else = False
    position = index + 1
    previous_number = view[index][0]
    depth = 0
    while position < len(view):
        number, text, _ = view[position]
        if number != previous_number + 1:
            break
        previous_number = number
        code = text.split("#", 1)[0]
        if not code.strip():
            position += 1
            continue
        line_indent = _indent(text)
        if depth == 0 and line_indent < indent:
            break
        if depth == 0 and line_indent == indent:
            other = ELSE_LINE.match(text)
            if not other:
                break
            has_else = other.group(2).startswith("else")
            branches.append(set())
        elif depth == 0 and line_indent > indent:
            branches[-1].update(_bound_names(code))
        depth = max(0, depth + sum(code.count(ch) for ch in "([{") - sum(code.count(ch) for ch in ")]}"))
        position += 1
    return branches, has_else, position


def _loop_binds(text, name):
    return re.match(rf"^\s*(?:for|async\s+for)\s+(?:[\w\s,()]*\b)?{re.escape(name)}\b[\w\s,()]*\s+in\b", text) is not None \
        or re.search(rf"\bas\s+{re.escape(name)}\s*:", text) is not None


def _bound_names(code):
    """Names a simple or tuple assignment statement binds, unless it rebinds from itself."""
    match = ASSIGNMENT.match(code)
    if not match:
        return set()
    targets = {name.strip() for name in match.group(1).split(",") if name.strip()}
    value = code[match.end():]
    return {name for name in targets if re.fullmatch(r"[A-Za-z_]\w*", name)
            and not re.search(rf"(?<![\w.]){re.escape(name)}\b", value)}


def twin_blocks(family, context, files):
    """The same run of ``min_lines`` substantive added lines in two or more files."""
    size = int(family.params.get("min_lines", 6))
    owners = defaultdict(dict)
    for diff in files:
        run = []
        previous = None
        for number, text in diff.added:
            if previous is not None and number != previous + 1:
                run = []
            previous = number
            key = normalize(text)
            if len(key) < 4 or diff.is_comment(text):
                continue
            run.append((number, key))
            if len(run) >= size:
                window = tuple(item[1] for item in run[-size:])
                owners[window].setdefault(diff.path, run[-size][0])
    found = []
    reported = set()
    for window, files in owners.items():
        if len(files) < 2:
            continue
        paths = tuple(sorted(files))
        if paths in reported:
            continue
        reported.add(paths)
        first, *others = paths
        found.append(_item(first, files[first], f"{size}+ identical added lines also in {', '.join(others)}: {window[0]}"))
    return found


def untouched_siblings(family, context, files):
    """A sibling group where the PR edits some members but not the others."""
    changed = [diff.path for diff in context.diffs]
    found = []
    for group in family.params.get("groups") or []:
        members = [(member, PathPattern.parse(member)) for member in group.get("members") or []]
        touched = [member for member, pattern in members if any(pattern.matches(path) for path in changed)]
        untouched = [member for member, pattern in members if member not in touched]
        if touched and untouched:
            found.append(_item(touched[0], None, f"{group.get('name', 'siblings')}: edits {', '.join(touched)}; "
                                                 f"not {', '.join(untouched)}"))
    return found


def code_without_tests(family, context, files):
    """Code with at least ``min_added`` added lines, and no test file in the PR."""
    minimum = int(family.params.get("min_added", 20))
    if any("tests" in context.config.file_kinds(diff.path) for diff in context.diffs):
        return []
    found = []
    for diff in files:
        if context.config.file_kinds(diff.path) == ["code"] and len(diff.added) >= minimum:
            found.append(_item(diff.path, None, f"{len(diff.added)} added lines, no test file changed"))
    return found


def amd_tuning_config(family, context, files):
    """Tuning JSON for an AMD device (the name says device_name=AMD_... or Radeon)."""
    return [_item(diff.path, None, "AMD tuning config") for diff in files
            if context.config.is_amd_tuning_config(diff.path)]


def new_env_vars(family, context, files):
    """Registered-prefix (``VLLM_*``) variables the diff introduces or drops, at the line that names them.

    New: read directly from the environment in added code and not read on a removed line
    (a move or reformat), or newly registered. Dropped: removed from the registry file.
    Names outside the prefix and reads through a variable are not evidence.
    """
    settings = context.config.checks["env_vars"]
    prefix = settings["registered_prefix"]
    scan = scan_env_vars(settings, files)
    found = []
    for name, (path, number, text) in scan.direct_reads.items():
        if (prefix is None or prefix.search(name)) and name not in scan.removed_reads \
                and name not in scan.visible and name not in scan.dropped:
            found.append(_item(path, number, text))
    for name in scan.new_registrations():
        number, text = scan.entries.get(name) or scan.declared[name]
        found.append(_item(scan.registry, number, text))
    for name in scan.dropped_for_good():
        number, text = scan.dropped[name]
        found.append(_item(scan.registry, number, "removed: " + text.strip()))
    return sorted(found, key=lambda item: (item["path"], item["line"]))


def added_in_function(family, context, files):
    """Net added code lines inside a function whose name matches ``params.functions``.

    ``params.lines`` (optional) narrows the lines to those matching one of its patterns;
    ``params.returns_parameter: true`` keeps only ``return NAME`` (or a view of NAME:
    ``NAME.view(...)``, ``NAME[...]``) where NAME is a parameter of that function. The
    enclosing def is the nearest less-indented def above the line in the visible hunk,
    else the hunk header when it names a def.
    """
    functions = _compiled(family.params.get("functions"))
    lines = _compiled(family.params.get("lines"))
    returns_parameter = bool(family.params.get("returns_parameter"))
    found = []
    for diff in files:
        if not diff.path.endswith(PY_SUFFIXES):
            continue
        net = {number for number, _ in context.net(diff).added_code}
        view = diff.new_view()
        for index, (number, text, is_added) in enumerate(view):
            if not is_added or number not in net or (lines and not any(rx.search(text) for rx in lines)):
                continue
            function, signature = _enclosing_def(view, index, diff)
            if not function or not any(rx.search(function) for rx in functions):
                continue
            if returns_parameter and _returned_name(text) not in _parameter_names(signature):
                continue
            found.append(_item(diff.path, number, f"in {function}: {text.strip()}"))
    return found


RETURNED_NAME = re.compile(r"^\s*return\s+([A-Za-z_]\w*)(?:\s*$|\s*\[|\.(?:view|view_as|reshape|t|transpose|"
                           r"permute|squeeze|unsqueeze|flatten|unflatten|narrow|expand|as_strided|detach)\()")
PARAMETER_NAME = re.compile(r"[(,]\s*\*{0,2}([A-Za-z_]\w*)")


def _compiled(patterns):
    return [re.compile(pattern) for pattern in patterns or []]


def _enclosing_def(view, index, diff):
    """(name, signature text) of the def enclosing view[index], or (None, "") for module-level code."""
    indent = _indent(view[index][1])
    if indent == 0:
        return None, ""
    number = view[index][0]
    for position in range(index - 1, -1, -1):
        earlier_number, text, _ = view[position]
        if earlier_number != number - 1:
            break
        number = earlier_number
        if not text.strip() or _indent(text) >= indent or text.lstrip().startswith((")", "]", "}")):
            continue  # deeper code, or the closing bracket of a signature or a call
        match = DEF_LINE.match(text)
        if match:
            return match.group(1), _signature(view, position)
        indent = _indent(text)
        if indent == 0:
            return None, ""
    for start, section in reversed(diff.hunk_sections):
        if start <= view[index][0]:
            match = DEF_LINE.match(section)
            return (match.group(1), section) if match else (None, "")
    return None, ""


def _signature(view, position):
    """The def line at view[position] joined with its continuation lines, up to the closing ``:``."""
    parts = []
    for _, text, _ in view[position:position + 40]:
        parts.append(text)
        if text.rstrip().endswith(":"):
            break
    return " ".join(parts)


def _returned_name(text):
    match = RETURNED_NAME.match(text.split("#", 1)[0])
    return match.group(1) if match else None


def _parameter_names(signature):
    head = signature.split("->", 1)[0]
    return {name for name in PARAMETER_NAME.findall(head) if name not in {"self", "cls"}}


def shared_surface_touched(family, context, files):
    """Shared files the gate found: cross-backend regressions are possible."""
    return [_item(entry["path"], None, "; ".join(entry["why"])) for entry in context.shared_files]


DETECTORS = {
    "signature-change": signature_change,
    "conditional-binding": conditional_binding,
    "twin-blocks": twin_blocks,
    "untouched-siblings": untouched_siblings,
    "code-without-tests": code_without_tests,
    "amd-tuning-config": amd_tuning_config,
    "shared-surface-touched": shared_surface_touched,
    "new-env-vars": new_env_vars,
    "added-in-function": added_in_function,
}
