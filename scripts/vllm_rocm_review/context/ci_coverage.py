"""Section 6: which AMD CI steps at head run each changed test file, and CI paths that do not exist."""

import bisect
import posixpath
import re
import shlex

import yaml

from .workspace import flag
from .workspace import matches_any

# The C loader when PyYAML has it: CI files are large and read on every run.
YAML_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
PATH_TOKEN = re.compile(r"^[\w./-]+$")
LIST_PATH = re.compile(r"^\s*-\s*[\"']?(?P<path>[\w.-]+/[\w./-]*)[\"']?\s*$")


def is_test_file(path):
    name = path.rsplit("/", 1)[-1]
    return path.startswith("tests/") and name.startswith("test_") and name.endswith(".py")


def amd_steps(ws):
    """[(file, label, base dir, [command paths], [ignored paths])] of every AMD step at head.

    A step runs on AMD when its file is an AMD pipeline (``amd_files``), or when a step of a
    mirrored file (``mirrored_files``) has a ``mirror.<mirror_key>`` block or lists an AMD agent in
    ``mirror_hardwares`` (the older form of the same mirror).
    """
    ci = ws.settings["ci"]
    files = [p for p in ws.head_paths() if p in ci["amd_files"] or matches_any(p, ci["mirrored_files"])]
    texts = ws.reader.read_many(ws.head, files)
    steps = []
    for path in files:
        try:
            data = yaml.load(texts[path] or "", Loader=YAML_LOADER)
        except yaml.YAMLError:
            continue
        whole_file = path in ci["amd_files"]
        for step in _walk(data.get("steps") if isinstance(data, dict) else data):
            mirror = (step.get("mirror") or {}).get(ci["mirror_key"]) if isinstance(step.get("mirror"), dict) else None
            hardwares = step.get(ci["mirror_hardwares_key"])
            listed = [str(h) for h in hardwares if str(h).startswith(ci["mirror_key"])] if isinstance(hardwares, list) else []
            if not whole_file and not isinstance(mirror, dict) and not listed:
                continue
            source = {**step, **(mirror if isinstance(mirror, dict) else {})}
            base = ci["working_dirs"].get(str(source.get("working_dir") or ci["default_working_dir"]), "tests")
            commands = source.get("commands") or step.get("commands") or [source.get("command") or ""]
            if isinstance(commands, str):
                commands = [commands]
            named = [_command_paths(str(command), base) for command in commands]
            paths = sorted({p for found, _ in named for p in found})
            ignored = sorted({p for _, skipped in named for p in skipped})
            pool = source.get("agent_pool") or source.get("device") or ", ".join(listed) or None
            label = str(step.get("label", "?")) + (f" [{pool}]" if pool else "")
            steps.append((path, label, base, paths, ignored))
    return steps


def _walk(steps):
    for step in steps or []:
        if isinstance(step, dict):
            if isinstance(step.get("steps"), list):
                yield from _walk(step["steps"])
            else:
                yield step


def _command_paths(command, base, strict=False):
    """(paths, ignored paths) a shell command names, each resolved against its working directory
    and also taken as written (``pytest tests/x.py`` run from tests/ still means tests/x.py).

    After ``pytest`` a bare word is a directory (``pytest -v -s lora``); ``--ignore=PATH`` is excluded.
    ``strict`` keeps only the paths as resolved that name a path for sure (with a ``/`` or ``.py``).
    """
    try:
        tokens = shlex.split(command, comments=False)
    except ValueError:
        tokens = command.split()
    found, ignored = [], []
    after_pytest = False
    for token in tokens:
        token = token.split("::", 1)[0].rstrip(";")
        after_pytest = after_pytest or token == "pytest" or token.endswith("/pytest")
        if token.startswith("--ignore="):
            ignored.extend(_resolved(token.split("=", 1)[1], base))
            continue
        if token.startswith("-") or not PATH_TOKEN.match(token):
            continue
        if "/" in token or token.endswith(".py"):
            found.extend(_resolved(token, base)[:1] if strict else _resolved(token, base))
        elif after_pytest and not strict and token not in ("pytest", "python", "python3"):
            found.extend(_resolved(token, base))
    return found, ignored


def _resolved(token, base):
    joined = posixpath.normpath(posixpath.join(base, token)) if base else posixpath.normpath(token)
    return [joined] if "/" not in token else [joined, posixpath.normpath(token)]


def covers(step_path, test_path):
    return test_path == step_path or test_path.startswith(step_path.rstrip("/") + "/")


def ci_coverage(ws):
    """{test file: [step labels]} for added or changed test files, and CI-PATH-MISSING flags."""
    steps = amd_steps(ws)
    coverage = {}
    for diff in ws.diffs:
        if diff.status != "removed" and is_test_file(diff.path):
            coverage[diff.path] = sorted({f"{file}: {label}" for file, label, _, paths, ignored in steps
                                          if any(covers(p, diff.path) for p in paths)
                                          and not any(covers(p, diff.path) for p in ignored)})
    return coverage, _missing_paths(ws)


def _missing_paths(ws):
    tree = ws.head_paths()
    default = ws.settings["ci"]["working_dirs"].get(ws.settings["ci"]["default_working_dir"], "tests")
    flags = []
    for diff in ws.diffs:
        if not diff.path.startswith(".buildkite/") or not diff.path.endswith((".yaml", ".yml")):
            continue
        for number, text in diff.added:
            listed = LIST_PATH.match(text)
            if listed:
                candidates = [[listed.group("path").rstrip("/")]]
            elif "pytest" in text:
                candidates = [[p, p[len(default) + 1:]] for p in _command_paths(text.lstrip(" -"), default, strict=True)[0]]
            else:
                continue
            for options in candidates:
                if not any(_exists(tree, p) for p in options):
                    flags.append(flag("CI-PATH-MISSING", diff.path, number,
                                      f"{options[0]} does not exist at head: the step fails or never runs it"))
    return flags


def _exists(tree, path):
    """``path`` is a file or directory of the sorted path list ``tree``."""
    index = bisect.bisect_left(tree, path)
    if index < len(tree) and tree[index] == path:
        return True
    index = bisect.bisect_left(tree, path + "/")
    return index < len(tree) and tree[index].startswith(path + "/")
