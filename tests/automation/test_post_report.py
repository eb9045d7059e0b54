"""post_report.py against the local replica: the sticky comment, dry runs, refusals, inline reviews."""

import copy
import json
import re

import pytest
from github_env import isolate_github_env
from github_replica import GitHubReplica
from github_replica import Reply

import post_report
from vllm_rocm_review.automation.inline import citations
from vllm_rocm_review.automation.marker import format_marker
from vllm_rocm_review.automation.marker import reviewed_head
from vllm_rocm_review.automation.posting import COMMENT_LIMIT
from vllm_rocm_review.automation.posting import comment_body

from conftest import TESTS_DIR

REPORTS = TESTS_DIR / "reports"
GOOD = (REPORTS / "good-report.md").read_text(encoding="utf-8")
DOCUMENT = json.loads((REPORTS / "pr-41234.json").read_text(encoding="utf-8"))
TOKEN = "ghp_postTestToken0123456789abcdefABCDEF"
REPO = DOCUMENT["meta"]["repo"]
NUMBER = DOCUMENT["pr"]["number"]
HEAD = DOCUMENT["pr"]["head"]["sha"]
COMMENTS = f"/repos/{REPO}/issues/{NUMBER}/comments"
REVIEWS = f"/repos/{REPO}/pulls/{NUMBER}/reviews"
ATTN = "vllm/v1/attention/backends/rocm_aiter_unified_attn.py"
NEW_TEST = "tests/kernels/attention/test_rocm_aiter_unified_attn.py"
OLD_TEST = "tests/kernels/attention/test_aiter_unified.py"


class PullThread:
    """The PR's issue comments and reviews on the replica, changed by the POSTs and PATCHes it gets."""

    def __init__(self, replica, comments=(), reviews=()):
        self.replica = replica
        self.comments = [self._comment(index, login, body) for index, (login, body) in enumerate(comments, 1)]
        self.reviews = list(reviews)
        replica.route("POST", re.escape(COMMENTS), self._create)
        replica.route("PATCH", r"/repos/[^/]+/[^/]+/issues/comments/(\d+)", self._edit)
        replica.route("POST", re.escape(REVIEWS), self._review)
        self._publish()

    def _comment(self, comment_id, login, body):
        kind = "Bot" if login == "rocm-review-bot" else "User"
        return {"id": comment_id, "user": {"login": login, "type": kind}, "author_association": "NONE", "body": body,
                "html_url": f"https://github.com/{REPO}/pull/{NUMBER}#issuecomment-{comment_id}"}

    def _publish(self):
        self.replica.add_list(COMMENTS, self.comments)
        self.replica.add_list(REVIEWS, self.reviews)

    def _create(self, request, match):
        comment = self._comment(len(self.comments) + 1, "rocm-review-bot", json.loads(request.data)["body"])
        self.comments.append(comment)
        self._publish()
        return Reply(comment, status=201)

    def _edit(self, request, match):
        comment = next(item for item in self.comments if item["id"] == int(match.group(1)))
        comment["body"] = json.loads(request.data)["body"]
        self._publish()
        return comment

    def _review(self, request, match):
        review = {"id": 900 + len(self.reviews), **json.loads(request.data), "state": "COMMENTED",
                  "user": {"login": "rocm-review-bot", "type": "Bot"}, "author_association": "NONE",
                  "html_url": f"https://github.com/{REPO}/pull/{NUMBER}#pullrequestreview-{900 + len(self.reviews)}"}
        self.reviews.append(review)
        self._publish()
        return review

    def marked(self):
        return [item for item in self.comments if reviewed_head(item["body"])]


@pytest.fixture
def replica(httpserver, monkeypatch, tmp_path):
    isolate_github_env(monkeypatch, tmp_path)
    return GitHubReplica(httpserver, tokens={TOKEN})


def write_inputs(tmp_path, report=GOOD, document=DOCUMENT):
    report_path = tmp_path / "pr-41234-review.md"
    report_path.write_text(report, encoding="utf-8")
    pr_path = tmp_path / "pr-41234.json"
    pr_path.write_text(json.dumps(document), encoding="utf-8")
    return str(report_path), str(pr_path)


def run(replica, capsys, report, pr_json, *options):
    code = post_report.main([report, "--pr-json", pr_json, "--api-url", replica.api_url, "--token", TOKEN, *options])
    captured = capsys.readouterr()
    return code, json.loads(captured.out) if captured.out else None, captured.err


def writes_seen(replica):
    return [(entry.method, entry.path) for entry in replica.log if entry.method in ("POST", "PATCH")]


def test_marker_is_found_among_130_comments_and_edited_in_place(replica, capsys, tmp_path):
    chatter = [(f"user{index}", f"comment {index}") for index in range(130)]
    chatter[114] = ("rocm-review-bot", f"old report\n\n{format_marker('1' * 40)}")
    thread = PullThread(replica, chatter)
    code, out, err = run(replica, capsys, *write_inputs(tmp_path), "--post")
    assert code == 0, err
    assert len(replica.seen(COMMENTS)) == 2  # two pages of 100
    assert writes_seen(replica) == [("PATCH", f"/repos/{REPO}/issues/comments/115")]
    assert len(thread.marked()) == 1 and reviewed_head(thread.comments[114]["body"]) == HEAD
    assert out["urls"] == [thread.comments[114]["html_url"]]


def test_a_marker_pasted_by_another_user_is_never_edited(replica, capsys, tmp_path):
    chatter = [("rocm-review-bot", f"old report\n\n{format_marker('1' * 40)}"),
               ("someone", f"look: {format_marker('2' * 40)}")]
    thread = PullThread(replica, chatter)
    code, out, err = run(replica, capsys, *write_inputs(tmp_path), "--post")
    assert code == 0, err
    assert writes_seen(replica) == [("PATCH", f"/repos/{REPO}/issues/comments/1")]
    assert reviewed_head(thread.comments[1]["body"]) == "2" * 40


def test_first_run_creates_the_comment_and_the_next_ones_edit_it(replica, capsys, tmp_path):
    thread = PullThread(replica, [("someone", "LGTM?")])
    report, pr_json = write_inputs(tmp_path)
    assert run(replica, capsys, report, pr_json, "--post")[0] == 0
    assert writes_seen(replica) == [("POST", COMMENTS)]
    moved = copy.deepcopy(DOCUMENT)
    moved["pr"]["head"]["sha"] = "c" * 40
    (tmp_path / "moved").mkdir()
    moved_json = write_inputs(tmp_path / "moved", GOOD, moved)[1]
    code, out, _ = run(replica, capsys, report, moved_json, "--post")
    assert code == 0 and [write["method"] for write in out["writes"]] == ["PATCH"]
    assert len(thread.marked()) == 1 and reviewed_head(thread.marked()[0]["body"]) == "c" * 40
    code, out, err = run(replica, capsys, report, moved_json, "--post")
    assert code == 0 and out["writes"] == [] and "nothing" in err
    assert writes_seen(replica) == [("POST", COMMENTS), ("PATCH", f"/repos/{REPO}/issues/comments/2")]


def test_dry_run_prints_the_write_and_sends_nothing(replica, capsys, tmp_path):
    PullThread(replica, [("someone", "first")])
    code, out, err = run(replica, capsys, *write_inputs(tmp_path))
    assert code == 0
    assert writes_seen(replica) == [] and len(replica.seen(COMMENTS)) == 1
    assert out["posted"] is False and out["repo"] == REPO and out["pr"] == NUMBER and out["head_sha"] == HEAD
    [write] = out["writes"]
    assert write["method"] == "POST" and write["path"] == COMMENTS
    assert write["body"]["body"] == GOOD.rstrip("\n") + "\n\n" + format_marker(HEAD)
    assert "urls" not in out and "dry run" in err


def test_failing_report_is_refused_before_any_request(replica, capsys, tmp_path):
    broken = GOOD.replace("## 5. 结论 (Verdict)", "## 5. Verdict")
    code, out, err = run(replica, capsys, *write_inputs(tmp_path, broken), "--post")
    assert code == 1 and out is None and replica.log == []
    assert err.count("\n") == 1 and err.startswith("error: ") and "check_report.py" in err


def test_403_on_posting_is_one_clear_line(replica, capsys, tmp_path):
    PullThread(replica)
    replica.fail("POST", re.escape(COMMENTS), 403, {"message": "Resource not accessible by integration"})
    code, out, err = run(replica, capsys, *write_inputs(tmp_path), "--post")
    assert code == 1 and out is None
    assert err.count("\n") == 1 and "403" in err and "Resource not accessible by integration" in err
    assert "write access" in err and TOKEN not in err


def test_post_without_a_token_is_refused(replica, capsys, tmp_path):
    report, pr_json = write_inputs(tmp_path)
    code = post_report.main([report, "--pr-json", pr_json, "--api-url", replica.api_url, "--post"])
    assert code == 1 and replica.log == [] and "needs a GitHub token" in capsys.readouterr().err


def renamed_document():
    """PR 41234 with its test file renamed (from OLD_TEST) and edited."""
    document = copy.deepcopy(DOCUMENT)
    old_header = f"diff --git a/{NEW_TEST} b/{NEW_TEST}\nindex 7777777..8888888 100644\n--- a/{NEW_TEST}\n"
    new_header = (f"diff --git a/{OLD_TEST} b/{NEW_TEST}\nsimilarity index 91%\nrename from {OLD_TEST}\n"
                  f"rename to {NEW_TEST}\nindex 7777777..8888888 100644\n--- a/{OLD_TEST}\n")
    assert old_header in document["diff"]
    document["diff"] = document["diff"].replace(old_header, new_header)
    entry = next(item for item in document["files"] if item["filename"] == NEW_TEST)
    entry.update(status="renamed", previous_filename=OLD_TEST)
    return document


INLINE_REPORT = (GOOD
                 .replace(f"`{ATTN}` 新增的分支", f"`{ATTN}:233` 新增的分支")
                 .replace("快路径在每次调用时用", f"快路径（`{ATTN}:300`）在每次调用时用")
                 .replace(f"`{NEW_TEST}` 新增的用例", f"`{NEW_TEST}:62` 新增的用例（原 `{OLD_TEST}:62`）"))


def test_inline_review_lands_on_the_renamed_files_new_path_and_keeps_outside_lines_in_the_summary(
        replica, capsys, tmp_path):
    thread = PullThread(replica)
    report, pr_json = write_inputs(tmp_path, INLINE_REPORT, renamed_document())
    code, out, err = run(replica, capsys, report, pr_json, "--post", "--inline")
    assert code == 0, err
    assert writes_seen(replica) == [("POST", COMMENTS), ("POST", REVIEWS)]
    [review] = thread.reviews
    assert review["event"] == "COMMENT" and review["commit_id"] == HEAD and reviewed_head(review["body"]) == HEAD
    placed = [(item["path"], item["line"], item["side"]) for item in review["comments"]]
    assert placed == [(ATTN, 233, "RIGHT"), (NEW_TEST, 62, "RIGHT")]
    assert review["comments"][0]["body"].startswith("**🔴【正确性】")
    assert "- **行动**:" in review["comments"][1]["body"]
    assert "position" not in review["comments"][0]
    summary_only = out["summary_only"]
    assert any("workspace" in title for title in summary_only)  # cites line 300, outside the hunk
    assert len(summary_only) == 4  # six findings, two placed
    code, out, _ = run(replica, capsys, report, pr_json, "--post", "--inline")
    assert code == 0 and out["writes"] == [] and len(thread.reviews) == 1


def test_an_old_path_citation_of_a_renamed_file_is_not_placed(replica, capsys, tmp_path):
    PullThread(replica)
    only_old = GOOD.replace(f"`{NEW_TEST}` 新增的用例", f"`{OLD_TEST}:62` 新增的用例")
    code, out, _ = run(replica, capsys, *write_inputs(tmp_path, only_old, renamed_document()), "--inline")
    assert code == 0 and [write["method"] for write in out["writes"]] == ["POST"]  # the comment only
    assert len(out["summary_only"]) == 6


def test_long_report_is_cut_at_a_line_with_a_note_and_keeps_the_marker():
    lines = [f"第 {index} 行：" + "很长的说明" * 40 for index in range(400)]
    text = "\n".join(lines[:200] + ["```", *lines[200:], "```"])
    body, cut = comment_body(text, HEAD, "outputs/pr-41234-review.md")
    assert cut and len(body) <= COMMENT_LIMIT
    assert body.endswith(format_marker(HEAD)) and "65536" in body and "pr-41234-review.md" in body
    kept = body.split("\n\n> ✂️")[0].split("\n")
    assert kept[:-1] == (lines[:200] + ["```"] + lines[200:])[:len(kept) - 1]
    assert kept[-1] == "```"  # the open fence is closed
    short, cut = comment_body(GOOD, HEAD, "r.md")
    assert not cut and short.endswith(format_marker(HEAD))


def test_a_report_over_the_limit_is_cut_not_rejected(replica, capsys, tmp_path):
    PullThread(replica)
    discussion = "\n".join(f"- 第 {index} 条讨论：维护者询问 decode 快路径在长上下文下的行为，作者给出了补充说明。" * 5
                           for index in range(320))
    long_report = GOOD.replace("## 5. 结论 (Verdict)", discussion + "\n\n## 5. 结论 (Verdict)")
    assert len(long_report) > COMMENT_LIMIT
    code, out, err = run(replica, capsys, *write_inputs(tmp_path, long_report))
    assert code == 0, err
    body = out["writes"][0]["body"]["body"]
    assert len(body) <= COMMENT_LIMIT and body.endswith(format_marker(HEAD))
    assert "comment is cut" in err and "> ✂️" in body
    assert long_report.startswith(body.split("\n\n> ✂️")[0] + "\n")


def test_citations_skip_other_repositories_and_urls():
    text = (f"见 `{ATTN}:233-240`、ROCm/aiter@v0.1.19:aiter/ops/quant.py:12 和 "
            "https://github.com/ROCm/aiter/blob/v0.1.19/aiter/ops/quant.py#L12，以及 ./vllm/envs.py:151")
    assert citations(text) == [(ATTN, 233), ("vllm/envs.py", 151)]
