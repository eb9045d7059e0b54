"""Parse the PR argument of fetch_pr_data.py: a number, #number, a PR URL (scheme optional) or OWNER/NAME#number."""

import re
from dataclasses import dataclass

DEFAULT_REPO = "vllm-project/vllm"

# GitHub's grammar for owner and repository names (also used to find issue references).
OWNER_PATTERN = r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})"
NAME_PATTERN = r"[A-Za-z0-9._-]{1,100}"
_REPO = re.compile(rf"^(?P<owner>{OWNER_PATTERN})/(?P<name>{NAME_PATTERN})$")
_NUMBER = re.compile(r"^#?(?P<number>[0-9]{1,9})$")
_SHORT = re.compile(rf"^(?P<owner>{OWNER_PATTERN})/(?P<name>{NAME_PATTERN})#(?P<number>[0-9]{{1,9}})$")
# Any host, so GitHub Enterprise URLs work; without a scheme the host needs a dot (github.com/…).
# Anything after the number (/files, #discussion…) is ignored.
_HOST = r"(?:https?://[^/\s]+|[^/\s:]+\.[^/\s]+)"
_URL = re.compile(
    rf"^{_HOST}/(?P<owner>{OWNER_PATTERN})/(?P<name>{NAME_PATTERN})/pull/(?P<number>[0-9]{{1,9}})(?:[/?#].*)?$"
)
_ISSUE_URL = re.compile(rf"^{_HOST}/{OWNER_PATTERN}/{NAME_PATTERN}/issues/[0-9]{{1,9}}(?:[/?#].*)?$")


class PullRefError(ValueError):
    """The PR argument or --repo is not in a form we accept; str() is the one-line usage error."""


@dataclass(frozen=True)
class PullRef:
    owner: str
    name: str
    number: int

    @property
    def repo(self):
        return f"{self.owner}/{self.name}"


def parse_repo(text):
    """Split OWNER/NAME, raising PullRefError for anything else."""
    match = _REPO.match((text or "").strip())
    if not match or match.group("name") in (".", ".."):
        raise PullRefError(f"--repo {text!r} is not OWNER/NAME (e.g. vllm-project/vllm)")
    return match.group("owner"), match.group("name")


def parse_pr_ref(text, repo=None):
    """Turn the PR argument into a PullRef; ``repo`` (--repo) applies to bare numbers.

    A repository named in the argument itself wins over the default, but contradicting an
    explicit --repo is an error rather than a silent choice.
    """
    value = (text or "").strip()
    number_only = _NUMBER.match(value)
    if number_only:
        owner, name = parse_repo(repo or DEFAULT_REPO)
        return _checked(PullRef(owner, name, int(number_only.group("number"))), value)
    match = _SHORT.match(value) or _URL.match(value)
    if not match and _ISSUE_URL.match(value):
        raise PullRefError(f"{text!r} is an issue URL; pass a pull request (…/pull/N, or its number)")
    if not match:
        raise PullRefError(
            f"cannot read PR {text!r}: use 12345, #12345, OWNER/NAME#12345 or https://github.com/OWNER/NAME/pull/12345"
        )
    ref = _checked(PullRef(match.group("owner"), match.group("name"), int(match.group("number"))), value)
    if repo and parse_repo(repo) != (ref.owner, ref.name):
        raise PullRefError(f"PR {text!r} names {ref.repo} but --repo says {repo}; drop one of them")
    return ref


def _checked(ref, text):
    if ref.number <= 0:
        raise PullRefError(f"PR number in {text!r} must be positive")
    if ref.name in (".", ".."):
        raise PullRefError(f"cannot read PR {text!r}: {ref.name!r} is not a repository name")
    return ref
