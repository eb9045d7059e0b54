"""One result of the report check, and its levels (shared by the check modules)."""

from dataclasses import asdict
from dataclasses import dataclass

LEVEL_ERROR = "error"
LEVEL_WARNING = "warning"
LEVEL_NOTE = "note"  # said, not counted against the report
LEVELS = (LEVEL_ERROR, LEVEL_WARNING, LEVEL_NOTE)


@dataclass(frozen=True)
class Finding:
    """One contract violation: where it is, a stable code, what is wrong and how to fix it."""

    level: str
    line: int
    code: str
    message: str
    fix: str

    def render(self, report_name):
        return f"{report_name}:{self.line}: {self.level} {self.code}: {self.message} — fix: {self.fix}"

    def to_dict(self):
        return asdict(self)
