"""Everything that talks to GitHub or git: the HTTP client, PR documents, trees, checkouts and sources."""
