"""The rocm-pr-review workflow keeps its safety properties: triggers, least privilege, no PR code, pinned actions."""

import re

import pytest
import yaml

from conftest import ROOT

WORKFLOW = ROOT / ".github" / "workflows" / "rocm-pr-review.yml"
PINNED = re.compile(r"^[\w.-]+/[\w.-]+(/[\w./-]+)?@[0-9a-f]{40}$")
VERSION_COMMENT = re.compile(r"uses: (\S+) # v\d+\.\d+\.\d+$", re.MULTILINE)
PR_HEAD_EXPRESSION = re.compile(r"github\.event\.pull_request\.head\.|github\.head_ref|refs/pull/")
ANTHROPIC_SECRETS = ("ANTHROPIC_API_KEY", "CLAUDE_CODE_OAUTH_TOKEN")


@pytest.fixture(scope="module")
def text():
    return WORKFLOW.read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def workflow(text):
    return yaml.safe_load(text)


def triggers(workflow):
    return workflow.get("on", workflow.get(True))  # YAML 1.1 reads a bare `on` key as True


def steps_using(job, action):
    return [step for step in job.get("steps", []) if step.get("uses", "").split("@")[0] == action]


def job_text(job):
    return yaml.safe_dump(job)


def secret_names(job):
    return set(re.findall(r"secrets\.([A-Z0-9_]+)", job_text(job)))


def test_triggers(workflow):
    on = triggers(workflow)
    assert on["pull_request_target"]["types"] == ["labeled", "synchronize"]
    assert on["issue_comment"]["types"] == ["created"]
    assert on["schedule"] and all("cron" in entry for entry in on["schedule"])
    assert "workflow_dispatch" in on
    assert "pull_request" not in on and "push" not in on
    gate = workflow["jobs"]["queue"]["if"]
    assert "github.event.label.name == 'rocm'" in gate
    assert "startsWith(github.event.comment.body, '/rocm-review')" in gate
    assert "author_association" in gate


def test_commenters_and_pushers_need_write_access(workflow):
    step = next(s for s in workflow["jobs"]["queue"]["steps"] if s.get("id") == "asker")
    assert "collaborators/$ASKER/permission" in step["run"] and "admin|write)" in step["run"]
    assert "issue_comment" in step["if"] and "pull_request_target" in step["if"]


def test_permissions_are_least_privilege_per_job(workflow):
    assert workflow["permissions"] == {}
    jobs = workflow["jobs"]
    assert jobs["queue"]["permissions"] == {"contents": "read", "pull-requests": "read"}
    assert jobs["review"]["permissions"] == {"contents": "read", "pull-requests": "read"}
    assert jobs["post"]["permissions"] == {"contents": "read", "pull-requests": "write"}
    writers = [name for name, job in jobs.items() if "write" in job["permissions"].values()]
    assert writers == ["post"]


def test_no_job_checks_out_or_reads_the_pr_head(workflow):
    """Not even the read-only queue job: its matrix steers the jobs that hold secrets."""
    for name, job in workflow["jobs"].items():
        for step in steps_using(job, "actions/checkout"):
            options = step.get("with", {})
            assert options.get("repository") == "${{ env.SKILL_REPO }}", f"{name} checks out something else"
            assert options.get("ref") == "${{ env.SKILL_REF }}"
            assert options.get("persist-credentials") is False
        assert not PR_HEAD_EXPRESSION.search(job_text(job)), f"job {name} refers to the PR head"
    skill = workflow["env"]
    assert not PR_HEAD_EXPRESSION.search(skill["SKILL_REPO"] + skill["SKILL_REF"])


def test_pr_code_is_read_as_data_only(workflow):
    review = workflow["jobs"]["review"]
    runs = "\n".join(step.get("run", "") for step in review["steps"])
    assert "--sources" in runs and "--checkout" not in runs
    agent = steps_using(review, "anthropics/claude-code-action")[0]["with"]
    assert "never use --checkout" in agent["prompt"]


def test_event_text_never_reaches_a_script_or_the_prompt(workflow):
    """Titles, bodies, branch names and comments are attacker-controlled: steps get event data via env only."""
    for name, job in workflow["jobs"].items():
        for step in job["steps"]:
            for text in (step.get("run", ""), step.get("with", {}).get("prompt", "")):
                assert "github.event." not in text, f"{name}: {step.get('name') or step.get('uses')}"


def test_every_action_is_pinned_to_a_commit_with_its_version(workflow, text):
    uses = [step["uses"] for job in workflow["jobs"].values() for step in job["steps"] if "uses" in step]
    assert uses, "the workflow uses no action"
    assert all(PINNED.match(ref) for ref in uses), [ref for ref in uses if not PINNED.match(ref)]
    assert sorted(VERSION_COMMENT.findall(text)) == sorted(uses)


def test_agent_runs_with_the_skill_and_limited_tools(workflow):
    review = workflow["jobs"]["review"]
    agent = steps_using(review, "anthropics/claude-code-action")
    assert len(agent) == 1
    options = agent[0]["with"]
    assert options["prompt"].startswith("review vllm PR ")
    assert "outputs/pr-${{ matrix.pr }}-review.md" in options["prompt"]
    tools = re.search(r'--allowedTools "([^"]+)"', options["claude_args"]).group(1).split(",")
    bash = [tool for tool in tools if tool.startswith("Bash(")]
    assert all(re.fullmatch(r"Bash\((python3 scripts/\w+\.py|git (log|show|diff|grep)):\*\)", tool) for tool in bash), bash
    assert {"Read", "Glob", "Grep"} <= set(tools)
    assert [tool for tool in tools if tool.startswith(("Edit", "Write"))] == ["Edit(outputs/**)", "Write(outputs/**)"]
    assert not {"Bash", "WebFetch", "WebSearch"} & set(tools)
    assert "allowed_non_write_users" not in options


def test_scripts_the_agent_may_run_exist_or_are_the_context_pack(workflow):
    options = steps_using(workflow["jobs"]["review"], "anthropics/claude-code-action")[0]["with"]
    scripts = re.findall(r"python3 (scripts/\w+\.py)", options["claude_args"])
    missing = [path for path in scripts if not (ROOT / path).is_file()]
    assert set(missing) <= {"scripts/context_pack.py"}, missing


def test_review_matrix_comes_from_the_queue_with_bounded_parallelism(workflow):
    review = workflow["jobs"]["review"]
    assert review["needs"] == "queue"
    assert review["strategy"]["matrix"] == "${{ fromJSON(needs.queue.outputs.matrix) }}"
    assert "vars.ROCM_REVIEW_MAX_PARALLEL" in review["strategy"]["max-parallel"]
    queue_run = next(s for s in workflow["jobs"]["queue"]["steps"] if s.get("id") == "matrix")["run"]
    assert "scripts/review_queue.py" in queue_run and "--json" in queue_run and "--marker-author" in queue_run
    assert '"$status" -ne 3' in queue_run  # a rate-limit stop still reviews what was found


def test_report_travels_as_an_artifact_to_a_post_job_without_the_anthropic_secret(workflow):
    jobs = workflow["jobs"]
    assert set(ANTHROPIC_SECRETS) <= secret_names(jobs["review"])
    assert not secret_names(jobs["post"]) and not secret_names(jobs["queue"])
    upload = steps_using(jobs["review"], "actions/upload-artifact")[0]["with"]
    download = steps_using(jobs["post"], "actions/download-artifact")[0]["with"]
    assert upload["name"] == download["name"] == "rocm-review-pr-${{ matrix.pr }}"
    assert upload["path"] == "outputs/pr-${{ matrix.pr }}-review.md"
    post_run = next(step["run"] for step in jobs["post"]["steps"] if "post_report.py" in step.get("run", ""))
    check = post_run.index('python3 scripts/check_report.py "outputs/pr-$PR-review.md"')
    post = post_run.index('python3 scripts/post_report.py "outputs/pr-$PR-review.md" --pr-json "outputs/pr-$PR.json" --post')
    assert check < post
    assert "$REVIEWED_HEAD" in post_run  # a report for an older head is never posted
    assert set(jobs["post"]["needs"]) == {"queue", "review"}


def test_concurrency_is_per_pr_and_a_new_push_cancels_the_stale_review(workflow):
    review = workflow["jobs"]["review"]["concurrency"]
    assert "${{ matrix.pr }}" in review["group"] and review["cancel-in-progress"] is True
    post = workflow["jobs"]["post"]["concurrency"]
    assert "${{ matrix.pr }}" in post["group"] and post["group"] != review["group"]
    assert "concurrency" not in workflow  # a workflow-wide group would let any PR comment cancel a review
