"""zizmor, the GitHub Actions security auditor, finds nothing to fix in the workflows; every suppression says why.

zizmor runs offline (--offline, no token, every proxy variable pointing at a local trap that counts
connections), without configuration files, so only inline `# zizmor: ignore[...]` comments count.
"""

import json
import os
import re
import shutil
import socket
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from conftest import ROOT

WORKFLOWS = sorted((ROOT / ".github" / "workflows").glob("*.yml"))
PERSONAS = ("regular", "auditor")  # regular is zizmor's default persona
BLOCKING_SEVERITIES = {"regular": {"High", "Medium"}, "auditor": {"High", "Medium", "Low", "Informational"}}
TOKEN_VARIABLES = ("GH_TOKEN", "GITHUB_TOKEN", "ZIZMOR_GITHUB_TOKEN")
PROXY_VARIABLES = ("HTTPS_PROXY", "HTTP_PROXY", "ALL_PROXY", "https_proxy", "http_proxy", "all_proxy")
SUPPRESSION = re.compile(r"#\s*zizmor:\s*ignore\[([^\]]*)\](.*)$")
MIN_REASON_WORDS = 5


@pytest.fixture(scope="module")
def zizmor():
    beside_python = Path(sys.executable).parent / "zizmor"
    found = str(beside_python) if beside_python.is_file() else shutil.which("zizmor")
    if not found:
        pytest.skip("zizmor is not installed: `pip install -e '.[test]'` adds it (the workflow audit needs it)")
    return found


@pytest.fixture(scope="module")
def network_trap():
    """A local proxy that counts and drops every connection: zizmor must never open one."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)
    connections = []

    def drop_all():
        while True:
            try:
                connection, _ = listener.accept()
            except OSError:
                return
            connections.append(connection.getpeername())
            connection.close()

    threading.Thread(target=drop_all, daemon=True).start()
    yield f"http://127.0.0.1:{listener.getsockname()[1]}", connections
    listener.close()


@pytest.fixture(scope="module")
def audit(zizmor, network_trap):
    proxy, connections = network_trap

    def run(paths, persona, honor_ignores=True):
        env = {name: value for name, value in os.environ.items() if name not in TOKEN_VARIABLES}
        env.update({name: proxy for name in PROXY_VARIABLES}, NO_PROXY="", no_proxy="", ZIZMOR_OFFLINE="true")
        command = [zizmor, "--offline", "--no-config", "--no-exit-codes", "--no-progress", "--format", "json",
                   "--persona", persona, *([] if honor_ignores else ["--no-ignores"]), *map(str, paths)]
        result = subprocess.run(command, capture_output=True, text=True, env=env, timeout=120)
        assert not connections, f"zizmor tried the network: {connections}"
        assert result.returncode == 0, result.stderr[-2000:]
        return json.loads(result.stdout)

    return run


def primary_spans(finding):
    """(path, first line, last line), 1-based, of each place the finding points at."""
    return [
        (
            location["symbolic"]["key"]["Local"]["verbatim_path"],
            location["concrete"]["location"]["start_point"]["row"] + 1,
            location["concrete"]["location"]["end_point"]["row"] + 1,
        )
        for location in finding["locations"]
        if location["symbolic"]["kind"] == "Primary"
    ]


def describe(finding):
    places = ", ".join(f"{Path(path).name}:{first}" for path, first, _ in primary_spans(finding))
    return f"{finding['determinations']['severity']} {finding['ident']} at {places}"


def blocking(findings, persona):
    return [describe(f) for f in findings if f["determinations"]["severity"] in BLOCKING_SEVERITIES[persona]]


def suppressions(path):
    """(line, audit names, reason) for every inline `# zizmor: ignore[...]` comment."""
    found = []
    for number, line in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), start=1):
        match = SUPPRESSION.search(line)
        if match:
            names = [name.strip() for name in match.group(1).split(",") if name.strip()]
            found.append((number, names, match.group(2).strip(" \t-:;—")))
    return found


def unexplained(paths):
    return [f"{Path(path).name}:{line}" for path in paths for line, _, reason in suppressions(path)
            if len(reason.split()) < MIN_REASON_WORDS]


def unused(paths, all_findings):
    """Suppressions that cover no finding of their audit on their line: stale, or misplaced."""
    covered = {
        (Path(path).resolve(), line, finding["ident"])
        for finding in all_findings
        for path, first, last in primary_spans(finding)
        for line in range(first, last + 1)
    }
    return [f"{Path(path).name}:{line} ignore[{name}]" for path in paths for line, names, _ in suppressions(path)
            for name in names if (Path(path).resolve(), line, name) not in covered]


@pytest.mark.parametrize("persona", PERSONAS)
def test_the_workflows_have_no_finding_to_fix(audit, persona):
    assert WORKFLOWS, "no workflow to audit"
    assert blocking(audit(WORKFLOWS, persona), persona) == []


def test_every_suppression_gives_its_reason_on_the_same_line():
    assert unexplained(WORKFLOWS) == []


def test_every_suppression_covers_a_real_finding(audit):
    assert unused(WORKFLOWS, audit(WORKFLOWS, "auditor", honor_ignores=False)) == []


BAD_WORKFLOW = """\
name: bad
on:
  pull_request_target:{trigger_comment}
    types: [opened]
permissions: {{}}
jobs:
  build:
    name: Build
    runs-on: ubuntu-latest
    permissions: {{}}
    concurrency:
      group: bad-${{{{ github.event.pull_request.number }}}}
      cancel-in-progress: true
    steps:
      - name: Say hello{step_comment}
        run: echo hello
"""


def write_bad_workflow(tmp_path, trigger_comment="", step_comment=""):
    path = tmp_path / "bad.yml"
    path.write_text(BAD_WORKFLOW.format(trigger_comment=trigger_comment, step_comment=step_comment), encoding="utf-8")
    return path


def test_a_dangerous_trigger_blocks_in_both_personas(audit, tmp_path):
    path = write_bad_workflow(tmp_path)
    for persona in PERSONAS:
        assert blocking(audit([path], persona), persona) == ["High dangerous-triggers at bad.yml:3"]


def test_a_bare_suppression_silences_zizmor_but_not_this_check(audit, tmp_path):
    path = write_bad_workflow(tmp_path, trigger_comment="  # zizmor: ignore[dangerous-triggers]")
    assert blocking(audit([path], "auditor"), "auditor") == []
    assert unexplained([path]) == ["bad.yml:3"]


def test_a_reasoned_suppression_passes_and_a_misplaced_one_is_reported(audit, tmp_path):
    path = write_bad_workflow(
        tmp_path,
        trigger_comment="  # zizmor: ignore[dangerous-triggers] the only job has no permission, secret or checkout",
        step_comment="  # zizmor: ignore[template-injection] nothing here expands an expression at all",
    )
    assert blocking(audit([path], "auditor"), "auditor") == []
    assert unexplained([path]) == []
    assert unused([path], audit([path], "auditor", honor_ignores=False)) == ["bad.yml:15 ignore[template-injection]"]
