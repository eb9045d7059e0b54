"""What the four scripts share at their edges: stderr talk, one-line errors, and their input files.

Every script reports a failure as one stderr line, ``error: <what is wrong>; <what to do>``,
and reads a PR document the same way, so the same bad file gets the same answer from
triage_pr.py and check_report.py.
"""

import json
import sys
import tempfile
from pathlib import Path

from .file_errors import describe_os_error
from .file_errors import read_failure
from .pr_schema import validate_pr_document

REFETCH = "re-create it with scripts/fetch_pr_data.py"
FIX_SURFACE = "fix the surface file (or restore it with git) and re-run"


class InputError(Exception):
    """An input the user has to fix; ``str()`` is the error line without its ``error:`` prefix."""


def say(line):
    print(line, file=sys.stderr, flush=True)


def fail(problem, code=1):
    """Print ``problem`` as one ``error:`` line (whitespace collapsed) and return ``code``."""
    say("error: " + " ".join(str(problem).split()))
    return code


def run_cli(run, args):
    """Exit code of ``run(args)``: an InputError or OSError becomes one ``error:`` line and 1."""
    try:
        run(args)
    except InputError as exc:
        return fail(exc)
    except OSError as exc:
        return fail(f"{describe_os_error(exc)}; check the path and permissions")
    return 0


def read_input_text(path, what, remedy):
    """The text of a file the user passed; InputError naming ``what`` and the ``remedy`` otherwise."""
    try:
        return Path(path).read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        reason = "no such file"
    except (OSError, UnicodeDecodeError) as error:
        reason = read_failure(error)
    raise InputError(f"cannot read {what} {path}: {reason}; {remedy}")


def load_pr_document(path):
    """A valid PR document from ``path``, or InputError saying why it is not one."""
    text = read_input_text(path, "PR JSON", "write it with scripts/fetch_pr_data.py")
    try:
        document = json.loads(text)
    except json.JSONDecodeError as error:
        raise InputError(f"{path} is not JSON ({error.msg} at line {error.lineno}); {REFETCH}") from None
    problems = validate_pr_document(document)
    if problems:
        more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
        raise InputError(f"{path} is not a PR document: {problems[0]}{more}; {REFETCH}")
    return document


def add_github_options(parser):
    """--token and --api-url, as fetch_pr_data.py and update_skill.py both take them."""
    parser.add_argument("--token", metavar="TOKEN",
                        help="GitHub token (default: $GH_TOKEN, $GITHUB_TOKEN, then `gh auth token`)")
    parser.add_argument("--api-url", metavar="URL",
                        help="GitHub API base URL (default: $GITHUB_API_URL, else https://api.github.com)")


def output_path_problem(path, option="--output", example="outputs/pr-12345.json"):
    """Why ``path`` cannot receive an output file, as one error line, or None when it can.

    Run before any work, so a bad path costs no requests. Missing directories are an error, not
    created: a typo in the path should not silently grow a directory tree.
    """
    target = Path(path)
    if target.is_dir():
        return f"{option} {path} is a directory; give a file path, e.g. {example}"
    parent = target.parent
    blocker = next((p for p in (parent, *parent.parents) if p.exists() and not p.is_dir()), None)
    if blocker is not None:
        return f"cannot write {path}: {blocker} is a file, not a directory; choose another path"
    if not parent.is_dir():
        return f"cannot write {path}: directory {parent} does not exist; create it (mkdir -p {parent}) or choose another path"
    try:
        with tempfile.TemporaryFile(dir=parent):
            pass
    except OSError as error:
        reason = (error.strerror or type(error).__name__).lower()
        return f"cannot write {path}: {parent} does not accept new files ({reason}); choose a writable directory"
    return None
