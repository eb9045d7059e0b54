import pytest

from vllm_rocm_review.automation.marker import find_report_comment
from vllm_rocm_review.automation.marker import format_marker
from vllm_rocm_review.automation.marker import reviewed_head

SHA = "0123456789abcdef0123456789abcdef01234567"


def test_marker_round_trips():
    body = "# report\n\n" + format_marker(SHA) + "\n"
    assert reviewed_head(body) == SHA


def test_marker_rejects_non_sha():
    with pytest.raises(ValueError):
        format_marker("main")


def test_body_without_marker_has_no_head():
    assert reviewed_head("LGTM <!-- some other bot head=abc1234 -->") is None
    assert reviewed_head(None) is None


def test_newest_marked_comment_wins_among_many():
    comments = [{"id": i, "body": f"comment {i}", "user": {"type": "Bot"}} for i in range(1, 130)]
    comments[10]["body"] += format_marker("a" * 40)
    comments[100]["body"] += format_marker(SHA)
    assert find_report_comment(comments)["id"] == 101
    assert find_report_comment(comments[:5]) is None


def test_marker_pasted_by_an_outsider_is_ignored():
    real = {"id": 5, "body": format_marker("a" * 40), "user": {"type": "Bot"}, "author_association": "NONE"}
    pasted = {"id": 9, "body": format_marker(SHA), "user": {"type": "User"}, "author_association": "CONTRIBUTOR"}
    maintainer = {"id": 7, "body": format_marker("b" * 40), "user": {"type": "User"}, "author_association": "MEMBER"}
    assert find_report_comment([real, pasted])["id"] == 5
    assert find_report_comment([real, pasted, maintainer])["id"] == 7
    assert find_report_comment([pasted]) is None
