"""Unattended reviews: which PRs need one, and putting the report back on the PR."""
