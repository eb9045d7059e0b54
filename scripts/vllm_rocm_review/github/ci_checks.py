"""CI state of a PR head: GitHub check runs plus commit statuses, slimmed and summarised.

vLLM's Buildkite pipelines (including the AMD ones) report through commit statuses while
GitHub Actions jobs appear as check runs, so a reviewer needs both to see AMD CI.
"""

from collections import Counter

# Outcomes that mean "this job says the change is broken" (a status "error" included).
FAILED_OUTCOMES = ("failure", "error", "timed_out")
CHECK_RUN_CONCLUSIONS = {
    "success": "success",
    "failure": "failure",
    "startup_failure": "failure",
    "neutral": "neutral",
    "stale": "neutral",
    "skipped": "skipped",
    "cancelled": "cancelled",
    "timed_out": "timed_out",
    "action_required": "action_required",
}
STATUS_STATES = {"success": "success", "failure": "failure", "error": "error", "pending": "pending"}


def slim_check_run(raw):
    app = raw.get("app") or {}
    return {
        "name": raw.get("name") or "",
        "status": raw.get("status") or "",
        "conclusion": raw.get("conclusion"),
        "details_url": raw.get("details_url") or raw.get("html_url"),
        "app": app.get("slug") or app.get("name"),
    }


def slim_status(raw):
    return {
        "context": raw.get("context") or "",
        "state": raw.get("state") or "",
        "description": raw.get("description"),
        "target_url": raw.get("target_url"),
    }


def check_run_outcome(run):
    """A run that has not completed is pending whatever its conclusion says."""
    if run["status"] != "completed":
        return "pending"
    return CHECK_RUN_CONCLUSIONS.get(run["conclusion"] or "", "neutral")


def status_outcome(status):
    return STATUS_STATES.get(status["state"], "pending")


def summarize_checks(check_runs, statuses):
    """Counts by outcome and the names of failed runs/statuses, in report order."""
    outcomes = [(run["name"], check_run_outcome(run)) for run in check_runs]
    outcomes += [(status["context"], status_outcome(status)) for status in statuses]
    failed = []
    for name, outcome in outcomes:
        if outcome in FAILED_OUTCOMES and name not in failed:
            failed.append(name)
    return {
        "total": len(outcomes),
        "by_outcome": dict(sorted(Counter(outcome for _, outcome in outcomes).items())),
        "failed": failed,
    }


def build_checks(raw_runs, raw_statuses):
    runs = [slim_check_run(raw) for raw in raw_runs]
    statuses = [slim_status(raw) for raw in raw_statuses]
    return {"check_runs": runs, "statuses": statuses, "summary": summarize_checks(runs, statuses)}
