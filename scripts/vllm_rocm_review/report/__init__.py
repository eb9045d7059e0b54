"""The report contract: its format, the scaffold and the checker."""
