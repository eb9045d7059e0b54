"""The rocm-pr-review workflows keep their safety properties: triggers, least privilege, no PR code, pinned actions."""

import re

import pytest
import yaml

from conftest import ROOT

WORKFLOWS = ROOT / ".github" / "workflows"
REVIEW_FILE = WORKFLOWS / "rocm-pr-review.yml"
REQUEST_FILE = WORKFLOWS / "rocm-pr-review-request.yml"
PINNED = re.compile(r"^[\w.-]+/[\w.-]+(/[\w./-]+)?@[0-9a-f]{40}$")
VERSION_COMMENT = re.compile(r"uses: (\S+) # v\d+\.\d+\.\d+$", re.MULTILINE)
PR_HEAD_EXPRESSION = re.compile(r"github\.event\.pull_request\.head\.|github\.head_ref|refs/pull/")
ANTHROPIC_SECRETS = ("ANTHROPIC_API_KEY", "CLAUDE_CODE_OAUTH_TOKEN")
PR_NUMBER_PATTERN = "^[1-9][0-9]{0,8}$"


@pytest.fixture(scope="module")
def texts():
    return {path.name: path.read_text(encoding="utf-8") for path in (REVIEW_FILE, REQUEST_FILE)}


@pytest.fixture(scope="module")
def workflow(texts):
    return yaml.safe_load(texts[REVIEW_FILE.name])


@pytest.fixture(scope="module")
def request_workflow(texts):
    return yaml.safe_load(texts[REQUEST_FILE.name])


@pytest.fixture(scope="module")
def all_jobs(workflow, request_workflow):
    return {**workflow["jobs"], **request_workflow["jobs"]}


def triggers(workflow):
    return workflow.get("on", workflow.get(True))  # YAML 1.1 reads a bare `on` key as True


def steps_using(job, action):
    return [step for step in job.get("steps", []) if step.get("uses", "").split("@")[0] == action]


def step_with_id(job, step_id):
    return next(step for step in job["steps"] if step.get("id") == step_id)


def job_text(job):
    return yaml.safe_dump(job)


def secret_names(job):
    return set(re.findall(r"secrets\.([A-Z0-9_]+)", job_text(job)))


def test_pr_events_reach_only_the_request_workflow(workflow, request_workflow):
    on = triggers(request_workflow)
    assert set(on) == {"pull_request", "issue_comment"}
    assert on["pull_request"]["types"] == ["labeled", "synchronize"]
    assert on["issue_comment"]["types"] == ["created"]
    gate = request_workflow["jobs"]["request"]["if"]
    assert "github.event.label.name == 'rocm'" in gate
    assert "startsWith(github.event.comment.body, '/rocm-review')" in gate
    assert "author_association" in gate

    on = triggers(workflow)
    assert set(on) == {"workflow_run", "schedule", "workflow_dispatch"}
    assert on["workflow_run"] == {"workflows": [request_workflow["name"]], "types": ["completed"]}
    assert on["schedule"] and all("cron" in entry for entry in on["schedule"])
    assert "github.event.workflow_run.conclusion == 'success'" in workflow["jobs"]["queue"]["if"]


def test_request_job_holds_nothing_and_records_only_the_pr_number(request_workflow):
    assert request_workflow["permissions"] == {}
    (job,) = request_workflow["jobs"].values()
    assert job["permissions"] == {}
    assert not secret_names(job) and "github.token" not in job_text(job)
    assert [step["uses"].split("@")[0] for step in job["steps"] if "uses" in step] == ["actions/upload-artifact"]
    record = next(step for step in job["steps"] if "run" in step)
    assert record["env"] == {"PR": "${{ github.event.pull_request.number || github.event.issue.number }}"}
    upload = steps_using(job, "actions/upload-artifact")[0]["with"]
    assert upload["name"] == "rocm-review-request" and upload["path"] == "request/pr"


def test_the_request_is_read_as_a_validated_number_only(workflow):
    queue = workflow["jobs"]["queue"]
    request = step_with_id(queue, "request")
    assert request["if"] == "github.event_name == 'workflow_run'"
    run = request["run"]
    assert "--name rocm-review-request" in run and '-gt 1024' in run and "head -c 16" in run
    assert f'[[ ! "$pr" =~ {PR_NUMBER_PATTERN} ]]' in run
    assert run.index(PR_NUMBER_PATTERN) < run.index('echo "pr=$pr" >> "$GITHUB_OUTPUT"')
    other_steps = [step for step in queue["steps"] if step is not request]
    assert "rocm-review-request" not in job_text({"steps": other_steps})  # nothing else reads the artifact
    matrix = step_with_id(queue, "matrix")
    assert matrix["env"]["EVENT_PR"] == "${{ steps.request.outputs.pr || inputs.pr }}"
    assert f'[[ ! "$EVENT_PR" =~ {PR_NUMBER_PATTERN} ]]' in matrix["run"]
    # A workflow_run without an allowed request queues nothing, rather than the whole queue.
    assert matrix["env"]["ALLOWED"] == "${{ github.event_name != 'workflow_run' || steps.asker.outputs.allowed == 'true' }}"


def test_commenters_and_pushers_need_write_access(workflow):
    step = step_with_id(workflow["jobs"]["queue"], "asker")
    assert step["if"] == "steps.request.outputs.pr"
    assert step["env"]["ASKER"] == "${{ github.event.workflow_run.triggering_actor.login }}"
    assert "collaborators/$ASKER/permission" in step["run"] and "admin|write)" in step["run"]


def test_a_label_or_push_request_must_name_the_labeled_pr_its_run_saw(workflow):
    """A fork's copy of the request workflow could name another PR; the head and label bind it to its own."""
    step = step_with_id(workflow["jobs"]["queue"], "asker")
    assert step["env"]["REQUEST_HEAD"] == "${{ github.event.workflow_run.head_sha }}"
    run = step["run"]
    assert 'if [ "$REQUEST_EVENT" = "pull_request" ]' in run
    assert '.name == "rocm"' in run and '[ "$seen" != "$REQUEST_HEAD true" ]' in run


def test_permissions_are_least_privilege_per_job(workflow, request_workflow, all_jobs):
    assert workflow["permissions"] == {} and request_workflow["permissions"] == {}
    jobs = workflow["jobs"]
    assert jobs["queue"]["permissions"] == {"actions": "read", "contents": "read", "pull-requests": "read"}
    assert jobs["review"]["permissions"] == {"contents": "read", "pull-requests": "read"}
    assert jobs["post"]["permissions"] == {"contents": "read", "pull-requests": "write"}
    writers = [name for name, job in all_jobs.items() if "write" in job["permissions"].values()]
    assert writers == ["post"]


def test_every_permission_says_why(texts):
    for name, text in texts.items():
        lines = text.splitlines()
        for number, line in enumerate(lines):
            if line.strip() == "permissions:":
                indent = len(line) - len(line.lstrip())
                for grant in lines[number + 1:]:
                    if len(grant) - len(grant.lstrip()) <= indent:
                        break
                    assert re.search(r"^\s+[\w-]+: (read|write) # \S", grant), f"{name}: {grant.strip()}"


def test_every_job_is_named_and_has_its_own_concurrency_group(workflow, request_workflow, all_jobs):
    assert "concurrency" not in workflow  # a workflow-wide group would let any request cancel a review
    assert "concurrency" not in request_workflow
    for name, job in all_jobs.items():
        assert job.get("name"), name
        assert job["concurrency"]["group"].startswith("rocm-pr-"), name
    groups = [job["concurrency"]["group"] for job in all_jobs.values()]
    assert len(set(groups)) == len(groups)


def test_no_job_checks_out_or_reads_the_pr_head(workflow, all_jobs):
    """Not even the read-only queue job: its matrix steers the jobs that hold secrets."""
    for name, job in all_jobs.items():
        for step in steps_using(job, "actions/checkout"):
            options = step.get("with", {})
            assert options.get("repository") == "${{ env.SKILL_REPO }}", f"{name} checks out something else"
            assert options.get("ref") == "${{ env.SKILL_REF }}"
            assert options.get("persist-credentials") is False
        assert not PR_HEAD_EXPRESSION.search(job_text(job)), f"job {name} refers to the PR head"
    skill = workflow["env"]
    assert not PR_HEAD_EXPRESSION.search(skill["SKILL_REPO"] + skill["SKILL_REF"])
    assert skill["SKILL_REF"] == "${{ vars.ROCM_REVIEW_SKILL_REF || github.sha }}"  # default branch under workflow_run


def test_pr_code_is_read_as_data_only(workflow):
    review = workflow["jobs"]["review"]
    runs = "\n".join(step.get("run", "") for step in review["steps"])
    assert 'python3 scripts/prepare_review.py "$GITHUB_REPOSITORY#$PR" --sources' in runs
    assert "--checkout" not in runs and "--repo" not in runs  # prepare_review.py --repo means a clone
    agent = steps_using(review, "anthropics/claude-code-action")[0]["with"]
    assert "never use --checkout" in agent["prompt"]
    assert "outputs/pr-${{ matrix.pr }}-brief.md" in agent["prompt"]


def test_event_text_never_reaches_a_script_or_the_prompt(all_jobs):
    """Titles, bodies, branch names and comments are attacker-controlled: steps get event data via env only."""
    for name, job in all_jobs.items():
        for step in job["steps"]:
            for text in (step.get("run", ""), step.get("with", {}).get("prompt", "")):
                assert "github.event." not in text, f"{name}: {step.get('name') or step.get('uses')}"
            assert "${{" not in step.get("run", ""), f"{name}: {step.get('name')} expands an expression in run"


def test_every_action_is_pinned_to_a_commit_with_its_version(workflow, request_workflow, texts):
    uses = [
        step["uses"]
        for flow in (workflow, request_workflow)
        for job in flow["jobs"].values()
        for step in job["steps"]
        if "uses" in step
    ]
    assert uses, "the workflows use no action"
    assert all(PINNED.match(ref) for ref in uses), [ref for ref in uses if not PINNED.match(ref)]
    commented = [ref for text in texts.values() for ref in VERSION_COMMENT.findall(text)]
    assert sorted(commented) == sorted(uses)


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


def test_scripts_the_workflow_runs_exist(workflow):
    review = workflow["jobs"]["review"]
    options = steps_using(review, "anthropics/claude-code-action")[0]["with"]
    runs = "\n".join(step.get("run", "") for job in workflow["jobs"].values() for step in job["steps"])
    scripts = set(re.findall(r"python3 (scripts/\w+\.py)", options["claude_args"] + runs))
    assert "scripts/check_report.py" in scripts
    missing = {path for path in scripts if not (ROOT / path).is_file()}
    assert not missing, missing


def test_review_matrix_comes_from_the_queue_with_bounded_parallelism(workflow):
    review = workflow["jobs"]["review"]
    assert review["needs"] == "queue"
    assert review["strategy"]["matrix"] == "${{ fromJSON(needs.queue.outputs.matrix) }}"
    assert "vars.ROCM_REVIEW_MAX_PARALLEL" in review["strategy"]["max-parallel"]
    queue_run = step_with_id(workflow["jobs"]["queue"], "matrix")["run"]
    assert "scripts/review_queue.py" in queue_run and "--json" in queue_run and "--marker-author" in queue_run
    assert '"$status" -ne 3' in queue_run  # a rate-limit stop still reviews what was found


def test_the_anthropic_secret_lives_in_an_environment_only_the_review_job_enters(workflow, all_jobs):
    review = workflow["jobs"]["review"]
    assert review["environment"] == "rocm-review"
    assert secret_names(review) == set(ANTHROPIC_SECRETS)
    others = {name: job for name, job in all_jobs.items() if name != "review"}
    assert not any(secret_names(job) for job in others.values())
    assert not any("environment" in job for job in others.values())


def test_report_travels_as_an_artifact_to_a_post_job_without_the_anthropic_secret(workflow):
    jobs = workflow["jobs"]
    upload = steps_using(jobs["review"], "actions/upload-artifact")[0]["with"]
    download = steps_using(jobs["post"], "actions/download-artifact")[0]["with"]
    assert upload["name"] == download["name"] == "rocm-review-pr-${{ matrix.pr }}"
    assert upload["path"] == "outputs/pr-${{ matrix.pr }}-review.md"
    assert "run-id" not in download  # only this run's review job, never the request run
    post_run = next(step["run"] for step in jobs["post"]["steps"] if "post_report.py" in step.get("run", ""))
    check = post_run.index('python3 scripts/check_report.py "outputs/pr-$PR-review.md"')
    post = post_run.index('python3 scripts/post_report.py "outputs/pr-$PR-review.md" --pr-json "outputs/pr-$PR.json" --post')
    assert check < post
    assert "$REVIEWED_HEAD" in post_run  # a report for an older head is never posted
    assert post_run.index('"$REVIEWED_HEAD"') < check
    assert set(jobs["post"]["needs"]) == {"queue", "review"}


def test_concurrency_is_per_pr_and_a_new_push_cancels_the_stale_review(workflow, request_workflow):
    review = workflow["jobs"]["review"]["concurrency"]
    assert "${{ matrix.pr }}" in review["group"] and review["cancel-in-progress"] is True
    post = workflow["jobs"]["post"]["concurrency"]
    assert "${{ matrix.pr }}" in post["group"] and post["cancel-in-progress"] is False
    request = request_workflow["jobs"]["request"]["concurrency"]
    assert "github.event.pull_request.number || github.event.issue.number" in request["group"]
    assert request["cancel-in-progress"] is False  # a comment that fails the gate must not cancel a request
    queue = workflow["jobs"]["queue"]["concurrency"]
    assert "'schedule'" in queue["group"] and queue["cancel-in-progress"] is False
