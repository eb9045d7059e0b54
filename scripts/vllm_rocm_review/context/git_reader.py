"""Read file contents, trees and word matches at a commit of a local clone, in as few git calls as possible.

Works on bare and normal clones alike (``git --git-dir``). File contents come from one
``git cat-file --batch`` per call, word searches from one ``git grep`` per pattern set, so a
pack for a 100-file PR costs a handful of processes, not hundreds.
"""

import re
import subprocess
from pathlib import Path

GIT_TIMEOUT = 600


class GitReadError(Exception):
    """A git command failed; str() is one line."""


def resolve_git_dir(repo):
    """The git directory of ``repo`` (a bare clone, a normal clone or its .git directory)."""
    path = Path(repo).expanduser()
    if not path.is_dir():
        raise GitReadError(f"{repo} is not a directory")
    done = _run(["git", "-C", str(path), "rev-parse", "--absolute-git-dir"], check=False)
    if done.returncode != 0:
        raise GitReadError(f"{repo} is not a git clone")
    return done.stdout.decode().strip()


def _run(command, stdin=None, check=True):
    try:
        done = subprocess.run(command, input=stdin, capture_output=True, timeout=GIT_TIMEOUT, check=False)
    except (OSError, subprocess.SubprocessError) as error:
        raise GitReadError(f"{command[1]} could not run: {error}") from None
    if check and done.returncode != 0:
        detail = " ".join(done.stderr.decode(errors="replace").split())[:200]
        raise GitReadError(f"git {command[3]} failed: {detail or f'exit {done.returncode}'}")
    return done


class CommitReader:
    """File contents, paths and word matches of one repository, memoised per (commit, path)."""

    def __init__(self, git_dir):
        self.git_dir = git_dir
        self._blobs = {}
        self._trees = {}

    def git(self, *args, stdin=None, check=True):
        return _run(["git", "--git-dir", self.git_dir, *args], stdin=stdin, check=check)

    def has_commit(self, sha):
        return bool(sha) and self.git("cat-file", "-e", f"{sha}^{{commit}}", check=False).returncode == 0

    def read_many(self, commit, paths):
        """{path: text or None (absent, or not UTF-8)} for ``paths`` at ``commit``, in one git call."""
        wanted = sorted({path for path in paths if (commit, path) not in self._blobs})
        if wanted:
            request = "".join(f"{commit}:{path}\n" for path in wanted).encode()
            output = self.git("cat-file", "--batch", stdin=request).stdout
            position = 0
            for path in wanted:
                end = output.index(b"\n", position)
                header = output[position:end].split()
                position = end + 1
                if len(header) < 3 or header[1] != b"blob":
                    self._blobs[(commit, path)] = None
                    continue
                size = int(header[2])
                data = output[position:position + size]
                position += size + 1
                try:
                    self._blobs[(commit, path)] = data.decode("utf-8")
                except UnicodeDecodeError:
                    self._blobs[(commit, path)] = None
        return {path: self._blobs[(commit, path)] for path in paths}

    def read(self, commit, path):
        return self.read_many(commit, [path])[path]

    def paths(self, commit):
        """Every file path at ``commit``, sorted."""
        if commit not in self._trees:
            listing = self.git("ls-tree", "-r", "--name-only", "-z", commit).stdout.decode("utf-8", "replace")
            self._trees[commit] = sorted(name for name in listing.split("\0") if name)
        return self._trees[commit]

    def grep_words(self, commit, words, pathspecs):
        """(path, line, text) for every line at ``commit`` holding any of ``words`` as a whole word.

        One PCRE alternation is far faster than hundreds of ``-F -w`` patterns; a git built
        without PCRE gets the fixed-string form.
        """
        if not words:
            return []
        alternation = "|".join(re.escape(word) for word in sorted(set(words)))
        done = self._grep(commit, ["-P", "-e", rf"\b(?:{alternation})\b"], pathspecs)
        if done is None:
            done = self._grep(commit, ["-F", "-w", *[arg for word in sorted(set(words)) for arg in ("-e", word)]],
                              pathspecs, required=True)
        return self._hits(commit, done)

    def grep_regex(self, commit, pattern, pathspecs):
        """(path, line, text) for every line at ``commit`` matching the extended regex ``pattern``."""
        return self._hits(commit, self._grep(commit, ["-E", "-e", pattern], pathspecs, required=True))

    def _grep(self, commit, pattern_args, pathspecs, required=False):
        done = self.git("grep", "-n", "-I", "--no-color", "--full-name", *pattern_args, commit, "--", *pathspecs,
                        check=False)
        if done.returncode in (0, 1):
            return done
        if not required:
            return None
        detail = " ".join(done.stderr.decode(errors="replace").split())[:200]
        raise GitReadError(f"git grep failed: {detail}")

    @staticmethod
    def _hits(commit, done):
        hits = []
        prefix = f"{commit}:"
        for raw in done.stdout.decode("utf-8", "replace").splitlines():
            if raw.startswith(prefix):
                raw = raw[len(prefix):]
            path, _, rest = raw.partition(":")
            number, _, text = rest.partition(":")
            if number.isdigit():
                hits.append((path, int(number), text))
        return hits


class SourcesReader:
    """The head files ``fetch_pr_data.py --sources`` saved; no base, no history, no search."""

    def __init__(self, directory, fetched):
        self.root = Path(directory)
        self.fetched = set(fetched)

    def read(self, _commit, path):
        if path not in self.fetched:
            return None
        try:
            return (self.root / path).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            return None

    def read_many(self, commit, paths):
        return {path: self.read(commit, path) for path in paths}
