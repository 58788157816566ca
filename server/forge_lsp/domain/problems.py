"""The editor's problems after the agent's edits: which are new, and how the model and the user are told.

After a call that changed a file, the editor's own language servers' diagnostics of it (not forge's) are
compared with what the file had before the turn's first edit of it: a problem is new when the file has more
of it (the same source, code and message) than it had then, so a problem the file already had is not new
wherever the edit moved it. Pure: the diagnostics come from a frontend (core/editor_check.py).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

DIAGNOSTICS_MODES = ("off", "report", "fail")
"""[verify] diagnostics, loosest first: "report" tells the model, "fail" makes the call a failed one too."""
SEVERITY_LEVELS = ("error", "warning")
"""[verify] severity, loosest first: the least severe problem that counts ("warning": errors and warnings)."""

ERROR, WARNING, INFORMATION, HINT = 1, 2, 3, 4
"""LSP's DiagnosticSeverity."""
SEVERITY_NAMES = {ERROR: "error", WARNING: "warning", INFORMATION: "information", HINT: "hint"}
MAX_PROBLEM_LINES = 20
"""New problems listed for the model in one call's result (the rest are counted)."""
MAX_MESSAGE_CHARS = 300
"""A problem's message as the model and the user see it: its first line, at most this long."""
MAX_DIAGNOSTICS = 2000
"""Diagnostics of one file taken from the editor (a client that sends more is cut here)."""


@dataclass(frozen=True)
class Problem:
    """One diagnostic of the editor's on a workspace file (path relative to the workspace, positions 0-based)."""

    path: str
    line: int
    character: int
    severity: int
    message: str
    source: str = ""
    code: str = ""

    @property
    def key(self) -> tuple[str, str, str]:
        """What makes two problems the same one, wherever the file's lines moved it."""
        return (self.source, self.code, self.message)

    @property
    def severity_name(self) -> str:
        return SEVERITY_NAMES.get(self.severity, "error")

    def line_text(self) -> str:
        """One line for the model and the transcript: app.py:3:7: error Ruff F821: Undefined name `y`."""
        origin = " ".join(part for part in (self.source, self.code) if part)
        origin = f" {origin}" if origin else ""
        return f"{self.path}:{self.line + 1}:{self.character + 1}: {self.severity_name}{origin}: {self.message}"

    def to_dict(self) -> dict[str, Any]:
        """The wire shape (forge/event problems): 1-based line and column, as people count them."""
        out: dict[str, Any] = {
            "path": self.path,
            "line": self.line + 1,
            "column": self.character + 1,
            "severity": self.severity_name,
            "message": self.message,
        }
        if self.source:
            out["source"] = self.source
        if self.code:
            out["code"] = self.code
        return out


@dataclass(frozen=True)
class EditorReport:
    """What the editor answered for one file: its problems, and whether its language servers had caught up."""

    problems: tuple[Problem, ...]
    caught_up: bool = True
    """False: the wait ran out before they reported (the problems are what the editor had then)."""


def _text(value: Any, limit: int = 200) -> str:
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        return ""
    return str(value).strip()[:limit]


def _int(value: Any, default: int = 0) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else default


def from_lsp(path: str, diagnostic: Any) -> Problem | None:
    """An LSP Diagnostic (as a client sends it: any JSON) as a Problem; None when it is not one.

    A severity left out is an error (as VS Code and Neovim take it); the message is its first line, cut."""
    if not isinstance(diagnostic, Mapping):
        return None
    message = diagnostic.get("message")
    if not isinstance(message, str) or not message.strip():
        return None
    first = message.strip().splitlines()[0]
    if len(first) > MAX_MESSAGE_CHARS:
        first = first[: MAX_MESSAGE_CHARS - 1] + "…"
    start = diagnostic.get("range", {}).get("start", {}) if isinstance(diagnostic.get("range"), Mapping) else {}
    start = start if isinstance(start, Mapping) else {}
    severity = diagnostic.get("severity")
    severity = severity if isinstance(severity, int) and severity in SEVERITY_NAMES and not isinstance(severity, bool) else ERROR
    return Problem(
        path=path,
        line=_int(start.get("line")),
        character=_int(start.get("character")),
        severity=severity,
        message=first,
        source=_text(diagnostic.get("source"), 80),
        code=_text(diagnostic.get("code"), 80),
    )


def counts(problem: Problem, level: str) -> bool:
    """Whether a problem is one [verify] severity counts: errors, or errors and warnings."""
    return problem.severity == ERROR or (level == "warning" and problem.severity == WARNING)


def new_problems(before: Sequence[Problem], after: Sequence[Problem]) -> list[Problem]:
    """The problems of after that before did not have: for each (source, code, message), as many as after has
    more of, the ones farthest from where before had them (an edit moves lines; it does not make a problem new)."""
    had: dict[tuple[str, str, str], list[int]] = {}
    for problem in before:
        had.setdefault(problem.key, []).append(problem.line)
    found: list[Problem] = []
    for key, group in _grouped(after).items():
        lines = sorted(had.get(key, []))
        extra = len(group) - len(lines)
        if extra <= 0:
            continue
        # Each problem of before takes the nearest one of after: what is left is new.
        left = list(group)
        for line in lines:
            left.remove(_nearest(left, line))
        found.extend(left)
    return sorted(found, key=lambda p: (p.path, p.line, p.character))


def _nearest(problems: Sequence[Problem], line: int) -> Problem:
    return min(problems, key=lambda p: abs(p.line - line))


def _grouped(problems: Iterable[Problem]) -> dict[tuple[str, str, str], list[Problem]]:
    out: dict[tuple[str, str, str], list[Problem]] = {}
    for problem in problems:
        out.setdefault(problem.key, []).append(problem)
    return out


def plural(n: int, noun: str) -> str:
    """ "1 new problem", "2 new problems"."""
    return f"{n} {noun}{'' if n == 1 else 's'}"


def files_phrase(files: Sequence[str], limit: int = 3) -> str:
    """app.py; app.py and b.py; a.py, b.py, c.py and 2 more files."""
    if len(files) <= 1:
        return files[0] if files else ""
    if len(files) <= limit:
        return ", ".join(files[:-1]) + f" and {files[-1]}"
    return ", ".join(files[:limit]) + f" and {plural(len(files) - limit, 'more file')}"


def listed(problems: Sequence[Problem], cap: int = MAX_PROBLEM_LINES) -> str:
    """One line per problem, at most cap of them, and how many more there are."""
    lines = [p.line_text() for p in problems[:cap]]
    if len(problems) > cap:
        lines.append(f"... and {len(problems) - cap} more")
    return "\n".join(lines)


def for_model(problems: Sequence[Problem], failed: bool) -> str:
    """What a call's result gets: the new problems, one a line (capped), and what to do about them."""
    paths = sorted({p.path for p in problems})
    head = (
        f"The editor reports {plural(len(problems), 'new problem')} in {files_phrase(paths)} (not there before this "
        f"turn's edits; from its language servers):"
    )
    tail = (
        'The edit was made and stays, but this call counts as failed until they are fixed ([verify] diagnostics = "fail").'
        if failed
        else "Fix them unless they are intended."
    )
    return f"{head}\n{listed(problems)}\n{tail}"


@dataclass(frozen=True)
class ProblemsLeft:
    """The new problems a turn leaves in the files it changed (each file as the editor last reported it)."""

    files: tuple[tuple[str, tuple[Problem, ...]], ...] = ()

    @property
    def count(self) -> int:
        return sum(len(problems) for _, problems in self.files)

    def to_dict(self) -> dict[str, Any]:
        """forge.run's and turnFinished's `problems`: {count, files: [{path, count}]}."""
        return {"count": self.count, "files": [{"path": path, "count": len(problems)} for path, problems in self.files]}

    def describe(self) -> str:
        """ "2 new problems in app.py" (the end notification's words)."""
        return f"{plural(self.count, 'new problem')} in {files_phrase([path for path, _ in self.files])}"

    def lines(self) -> str:
        """Every problem, one a line (the transcript)."""
        return listed([p for _, problems in self.files for p in problems], cap=200)


@dataclass
class TurnProblems:
    """A turn's view of the files it changed: what each had before its first edit, and its new problems since."""

    before: dict[str, list[Problem]] = field(default_factory=dict)
    """Per file, the editor's problems before the turn's first edit of it (counted ones only)."""
    new: dict[str, list[Problem]] = field(default_factory=dict)
    """Per file, its new problems as the editor last reported them."""

    def knows(self, path: str) -> bool:
        """Whether the file's state before the turn's first edit of it is known."""
        return path in self.before

    def start(self, path: str, problems: Sequence[Problem]) -> None:
        """The file before the turn's first edit of it."""
        self.before.setdefault(path, list(problems))

    def update(self, path: str, problems: Sequence[Problem] | None) -> list[Problem]:
        """The file as the editor reports it after an edit (None: removed): its new problems."""
        new = [] if problems is None else new_problems(self.before.get(path, []), problems)
        if new:
            self.new[path] = new
        else:
            self.new.pop(path, None)
        return new

    def left(self) -> ProblemsLeft | None:
        """What the turn leaves (None: no new problem)."""
        files = tuple((path, tuple(problems)) for path, problems in sorted(self.new.items()) if problems)
        return ProblemsLeft(files) if files else None
