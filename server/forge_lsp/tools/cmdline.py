"""Reading a shell command line far enough to match deny/confirm rules against what it runs.

A rule like ``rm -rf *`` must not be beaten by ``rm  -rf``, ``/bin/rm -fr``,
``\\rm``, ``sudo rm``, ``bash -c 'rm -rf /'``, ``x; rm -rf /`` or
``$(rm -rf /)``. So the line is split into simple commands (lists, pipelines,
subshells, command substitutions, ``bash -c`` strings, ``find -exec``, here-docs
fed to a shell), wrappers (sudo, env, nice, xargs, ...) and path prefixes are
stripped from each program name, and each simple command is matched on its
own. What cannot be read with confidence (unbalanced quotes, eval, a program
name made by an expansion, ...) raises Unanalysable, and the caller fails
closed. This is a guard against mistakes, not a security boundary: the shell
sandbox is that.
"""

from __future__ import annotations

import fnmatch
import re
from dataclasses import dataclass, field

from forge_lsp.patterns import compile_pattern, found

MAX_CHARS = 64 * 1024
"""A longer command line is not read (reading takes time on the event loop): Unanalysable."""

MAX_DEPTH = 8
"""Nesting of bash -c / $(...) read at most; deeper is Unanalysable."""

SHELLS = frozenset({"sh", "bash", "dash", "zsh", "ksh", "mksh", "ash", "fish", "yash", "rbash"})

# Wrapper -> (short options that take an argument, long options that take an argument, positionals to skip).
WRAPPERS: dict[str, tuple[str, frozenset[str], int]] = {
    "sudo": (
        "CDghpRrtTUu",
        frozenset(
            {
                "--chdir",
                "--group",
                "--host",
                "--prompt",
                "--chroot",
                "--role",
                "--type",
                "--user",
                "--other-user",
                "--close-from",
                "--command-timeout",
            }
        ),
        0,
    ),
    "doas": ("Cu", frozenset(), 0),
    "env": ("CSu", frozenset({"--chdir", "--split-string", "--unset"}), 0),
    "command": ("", frozenset(), 0),
    "builtin": ("", frozenset(), 0),
    "exec": ("a", frozenset(), 0),
    "nice": ("n", frozenset({"--adjustment"}), 0),
    "nohup": ("", frozenset(), 0),
    "time": ("fo", frozenset({"--format", "--output"}), 0),
    "timeout": ("ks", frozenset({"--kill-after", "--signal"}), 1),
    "xargs": (
        "adEeIiLlnPs",
        frozenset(
            {
                "--arg-file",
                "--delimiter",
                "--eof",
                "--replace",
                "--max-lines",
                "--max-args",
                "--max-procs",
                "--max-chars",
                "--process-slot-var",
            }
        ),
        0,
    ),
    "busybox": ("", frozenset(), 0),
    "setsid": ("", frozenset(), 0),
    "stdbuf": ("ioe", frozenset({"--input", "--output", "--error"}), 0),
    "ionice": ("cnp", frozenset({"--class", "--classdata", "--pid"}), 0),
    "chronic": ("", frozenset(), 0),
    "unbuffer": ("", frozenset(), 0),
}

# Long options that mean the same as a short one, per program (rm --recursive == rm -r).
FLAG_ALIASES: dict[str, dict[str, str]] = {
    "rm": {"--recursive": "r", "--force": "f", "-R": "r", "--dir": "d"},
    "git": {"--force": "f"},
    "chmod": {"--recursive": "R"},
    "chown": {"--recursive": "R"},
}

_KEYWORDS = frozenset({"!", "{", "}", "if", "then", "else", "elif", "fi", "do", "done", "while", "until"})
_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\[[^]]*\])?\+?=")
_META = " \t\n;&|<>()"
_PARAMETER = re.compile(r"\$([A-Za-z_][A-Za-z0-9_]*|[0-9@*#?$!-])")
_OPERATORS = (
    "&&",
    "||",
    ";;",
    ";&",
    "|&",
    "&>>",
    "&>",
    "<<<",
    "<<-",
    "<<",
    "<>",
    ">>",
    ">|",
    ">&",
    "<&",
    "|",
    "&",
    ";",
    "<",
    ">",
    "(",
    ")",
)
_REDIRECTIONS = frozenset({"&>>", "&>", "<<<", "<>", ">>", ">|", ">&", "<&", "<", ">"})


class Unanalysable(Exception):
    """The command line cannot be read with confidence; the message says why."""


class _Word:
    """One word after quote removal, built piece by piece (appending to a str attribute is quadratic)."""

    def __init__(self, text: str = "", expanded: bool = False, pattern: bool = False) -> None:
        self.parts = [text]
        self.expanded = expanded
        """The shell expands something in it ($x, $(...), `...`), so its runtime text is unknown."""
        self.pattern = pattern
        """An unquoted glob or brace: the shell may turn it into other words."""

    @property
    def text(self) -> str:
        if len(self.parts) > 1:
            self.parts = ["".join(self.parts)]
        return self.parts[0]

    def add(self, piece: str) -> None:
        self.parts.append(piece)


@dataclass
class _Command:
    words: list[_Word] = field(default_factory=list)
    heredocs: list[tuple[str, bool]] = field(default_factory=list)
    """Bodies given on stdin, and whether the shell expands inside them."""
    op_before: str = ";"


@dataclass(frozen=True)
class Analysis:
    """What a command line runs: every simple command, normalised, and each script's normalised line."""

    commands: tuple[tuple[str, ...], ...]
    lines: tuple[str, ...]


def analyse(command: str) -> Analysis:
    """Read a command line; Unanalysable when that cannot be done with confidence."""
    if len(command) > MAX_CHARS:
        raise Unanalysable(f"longer than {MAX_CHARS} characters")
    commands: list[tuple[str, ...]] = []
    lines: list[str] = []
    _analyse_script(command, 0, commands, lines)
    return Analysis(tuple(commands), tuple(lines))


def _analyse_script(script: str, depth: int, commands: list[tuple[str, ...]], lines: list[str]) -> None:
    if depth > MAX_DEPTH:
        raise Unanalysable(f"nested more than {MAX_DEPTH} levels deep")
    lexer = _Lexer(script, depth, commands, lines)
    parsed = lexer.script()
    pieces: list[str] = []
    previous: tuple[str, ...] | None = None
    for cmd in parsed:
        words = _normalise(cmd, depth, commands, lines)
        if words is None:
            continue
        commands.append(words)
        if previous is not None:
            pieces.append({"|": "|", "|&": "|", "&&": "&&", "||": "||", "&": "&"}.get(cmd.op_before, ";"))
        pieces.append(" ".join(words))
        # `echo 'rm -rf /' | sh`: what is echoed is the script.
        if cmd.op_before in ("|", "|&") and previous and previous[0] == "echo" and words[0] in SHELLS and len(words) == 1:
            _analyse_script(" ".join(w for w in previous[1:] if not re.fullmatch(r"-[neE]+", w)), depth + 1, commands, lines)
        previous = words
    lines.append(" ".join(pieces))


class _Lexer:
    """Splits a script into simple commands; substitutions inside are analysed as they are met."""

    def __init__(self, src: str, depth: int, commands: list[tuple[str, ...]], lines: list[str]) -> None:
        self.src = src
        self.pos = 0
        self.depth = depth
        self.commands = commands
        self.lines = lines
        self.pending: list[tuple[_Command, str, bool, bool]] = []
        """Here-docs waiting for the end of the line: command, delimiter, strip tabs, expands."""

    def script(self, closing: str | None = None) -> list[_Command]:
        """Simple commands up to the end (or up to an unmatched `closing`)."""
        out: list[_Command] = []
        cmd = _Command()
        parens = 0
        redirect: str | None = None
        op = ";"

        def end(next_op: str) -> None:
            nonlocal cmd, op
            if cmd.words or cmd.heredocs:
                out.append(cmd)
            cmd = _Command()
            op = next_op

        while True:
            self._blank()
            if self.pos >= len(self.src):
                if closing is not None:
                    raise Unanalysable(f"missing {closing!r}")
                break
            c = self.src[self.pos]
            if c == "#" and (self.pos == 0 or self.src[self.pos - 1] in _META):
                while self.pos < len(self.src) and self.src[self.pos] != "\n":
                    self.pos += 1
                continue
            if c == "\n":
                self.pos += 1
                self._heredoc_bodies()
                end(";")
                continue
            operator = next((o for o in _OPERATORS if self.src.startswith(o, self.pos)), None)
            if operator is None:
                word = self._word()
                if redirect == "<<<":
                    cmd.heredocs.append((word.text, word.expanded))
                if redirect is None:
                    if not cmd.words:
                        cmd.op_before = op
                    cmd.words.append(word)
                redirect = None  # a redirection's target is not an argument of the command
                continue
            if operator == ")" and closing == ")" and parens == 0:
                self.pos += 1
                end(";")
                return out
            self.pos += len(operator)
            if operator in (";;", ";&"):
                raise Unanalysable("case statements are not analysed")
            if operator in ("<<", "<<-"):
                self._heredoc(cmd, operator == "<<-")
            elif operator in ("<", ">") and self.src.startswith("(", self.pos):
                # <(...) / >(...): a process substitution runs a command; as a word it is a file name.
                self.pos += 1
                cmd.words.append(_Word(operator + "(" + self._substitution() + ")", expanded=True))
            elif operator in _REDIRECTIONS:
                before = self.pos - len(operator)
                if cmd.words and re.fullmatch(r"\d+", cmd.words[-1].text) and before > 0 and self.src[before - 1] not in " \t":
                    cmd.words.pop()  # 2>file: the 2 is a file descriptor, not a word
                redirect = operator
            elif operator == "(":
                if cmd.words:
                    raise Unanalysable("'(' inside a command (function definitions, arrays) is not analysed")
                parens += 1
            elif operator == ")":
                parens -= 1
                if parens < 0:
                    raise Unanalysable("unbalanced ')'")
                end(";")
            else:
                end(operator)
        if parens:
            raise Unanalysable("unbalanced '('")
        self._heredoc_bodies()
        end(";")
        return out

    def _blank(self) -> None:
        while self.pos < len(self.src):
            if self.src[self.pos] in " \t":
                self.pos += 1
            elif self.src.startswith("\\\n", self.pos):
                self.pos += 2
            else:
                return

    def _heredoc(self, cmd: _Command, strip: bool) -> None:
        self._blank()
        start = self.pos
        delim = self._word()
        quoted = any(q in self.src[start : self.pos] for q in "'\"\\")
        if not delim.text or delim.expanded:
            raise Unanalysable("a here-document whose delimiter is not plain")
        self.pending.append((cmd, delim.text, strip, not quoted))

    def _heredoc_bodies(self) -> None:
        for cmd, delim, strip, expands in self.pending:
            body: list[str] = []
            while self.pos < len(self.src):
                end = self.src.find("\n", self.pos)
                end = len(self.src) if end < 0 else end
                line = self.src[self.pos : end]
                self.pos = end + 1
                if (line.lstrip("\t") if strip else line) == delim:
                    break
                body.append(line)
            cmd.heredocs.append(("\n".join(body), expands))
        self.pending = []

    def _word(self) -> _Word:
        w = _Word()
        src = self.src
        while self.pos < len(src):
            c = src[self.pos]
            if c in _META:
                break
            if c == "\\":
                if src.startswith("\\\n", self.pos):
                    self.pos += 2
                    continue
                if self.pos + 1 >= len(src):
                    self.pos += 1
                    continue
                w.add(src[self.pos + 1])
                self.pos += 2
            elif c == "'":
                end = src.find("'", self.pos + 1)
                if end < 0:
                    raise Unanalysable("unbalanced single quote")
                w.add(src[self.pos + 1 : end])
                self.pos = end + 1
            elif c == '"':
                self.pos += 1
                self._double_quoted(w)
            elif c == "$":
                self._dollar(w, quoted=False)
            elif c == "`":
                w.add(self._backticks())
                w.expanded = True
            else:
                if c in "*?[{":
                    w.pattern = True  # a glob, or maybe a brace expansion ({rm,-rf,x} is three words)
                if c in "@+!" and src.startswith("(", self.pos + 1):
                    raise Unanalysable("extended globs are not analysed")
                w.add(c)
                self.pos += 1
        return w

    def _double_quoted(self, w: _Word) -> None:
        src = self.src
        while True:
            if self.pos >= len(src):
                raise Unanalysable("unbalanced double quote")
            c = src[self.pos]
            if c == '"':
                self.pos += 1
                return
            if c == "\\" and self.pos + 1 < len(src):
                nxt = src[self.pos + 1]
                w.add(nxt if nxt in '$`"\\' else ("" if nxt == "\n" else "\\" + nxt))
                self.pos += 2
            elif c == "$":
                self._dollar(w, quoted=True)
            elif c == "`":
                w.add(self._backticks())
                w.expanded = True
            else:
                w.add(c)
                self.pos += 1

    def _dollar(self, w: _Word, quoted: bool) -> None:
        src = self.src
        start = self.pos
        if src.startswith("$((", self.pos):
            end = src.find("))", self.pos)
            if end < 0:
                raise Unanalysable("unbalanced $((")
            inner = src[self.pos + 3 : end]
            if "$(" in inner or "`" in inner:
                raise Unanalysable("command substitution inside arithmetic")
            self.pos = end + 2
            w.add(src[start : self.pos])
            w.expanded = True
        elif src.startswith("$(", self.pos):
            self.pos += 2
            inner = self._substitution()
            w.add("$(" + inner + ")")
            w.expanded = True
        elif src.startswith("${", self.pos):
            end = src.find("}", self.pos)
            if end < 0:
                raise Unanalysable("unbalanced ${")
            inner = src[self.pos + 2 : end]
            if "$(" in inner or "`" in inner or "{" in inner:
                raise Unanalysable("a command inside ${...}")
            self.pos = end + 1
            w.add(src[start : self.pos])
            w.expanded = True
        elif src.startswith("$'", self.pos) and not quoted:
            end = self.pos + 2
            while end < len(src) and src[end] != "'":
                end += 2 if src[end] == "\\" else 1
            if end >= len(src):
                raise Unanalysable("unbalanced $'")
            w.add(_ANSI_C.sub(_ansi_c, src[self.pos + 2 : end]))
            self.pos = end + 1
        elif src.startswith('$"', self.pos) and not quoted:
            self.pos += 2
            self._double_quoted(w)
        else:
            m = _PARAMETER.match(src, self.pos)
            if m is None:
                w.add("$")
                self.pos += 1
                return
            w.add(m.group(0))
            w.expanded = True
            self.pos += len(m.group(0))

    def _substitution(self) -> str:
        """After `$(` or `<(`: analyse what runs inside, return its source text."""
        start = self.pos
        inner = _Lexer(self.src, self.depth + 1, self.commands, self.lines)
        inner.pos = self.pos
        if self.depth + 1 > MAX_DEPTH:
            raise Unanalysable(f"nested more than {MAX_DEPTH} levels deep")
        parsed = inner.script(closing=")")
        self.pos = inner.pos
        source = self.src[start : self.pos - 1]
        pieces = []
        for cmd in parsed:
            words = _normalise(cmd, self.depth + 1, self.commands, self.lines)
            if words is not None:
                self.commands.append(words)
                pieces.append(" ".join(words))
        self.lines.append("; ".join(pieces))
        return source

    def _backticks(self) -> str:
        src = self.src
        i = self.pos + 1
        inner = ""
        while i < len(src) and src[i] != "`":
            if src[i] == "\\" and i + 1 < len(src) and src[i + 1] in "`$\\":
                inner += src[i + 1]
                i += 2
            else:
                inner += src[i]
                i += 1
        if i >= len(src):
            raise Unanalysable("unbalanced backquote")
        self.pos = i + 1
        _analyse_script(inner, self.depth + 1, self.commands, self.lines)
        return "`" + inner + "`"


_ANSI_C = re.compile(r"\\(x[0-9A-Fa-f]{1,2}|u[0-9A-Fa-f]{1,4}|U[0-9A-Fa-f]{1,8}|[0-7]{1,3}|c.|.)", re.S)
_ANSI_C_SIMPLE = {"a": "\a", "b": "\b", "e": "\x1b", "E": "\x1b", "f": "\f", "n": "\n", "r": "\r", "t": "\t", "v": "\v"}


def _ansi_c(m: re.Match[str]) -> str:
    """One escape of bash's $'...' quoting ($'\\x72m' is rm); an unknown one keeps its backslash, as bash does."""
    esc = m.group(1)
    if esc[0] in "xuU" and len(esc) > 1:
        code = int(esc[1:], 16)
        return chr(code) if code <= 0x10FFFF else ""
    if esc[0] in "01234567":
        return chr(int(esc, 8) & 0xFF)
    if esc[0] == "c" and len(esc) == 2:
        return chr(ord(esc[1]) & 0x1F)
    if esc in _ANSI_C_SIMPLE:
        return _ANSI_C_SIMPLE[esc]
    return esc if esc in "\\'\"?" else "\\" + esc


def _program(word: _Word) -> str:
    if word.expanded or (word.pattern and word.text not in ("[", "[[")):
        raise Unanalysable(f"the program name {word.text!r} is made by an expansion")
    name = word.text.rstrip("/").rsplit("/", 1)[-1]
    return name


def _normalise(cmd: _Command, depth: int, commands: list[tuple[str, ...]], lines: list[str]) -> tuple[str, ...] | None:
    """The words a simple command runs, wrappers and paths stripped; nested scripts analysed on the way."""
    words = list(cmd.words)
    while words and (_ASSIGNMENT.match(words[0].text) and not words[0].pattern):
        words.pop(0)
    while words and words[0].text in _KEYWORDS and not words[0].expanded:
        words.pop(0)
    if words and words[0].text in ("for", "select", "case", "function", "coproc"):
        if words[0].text in ("case", "function", "coproc"):
            raise Unanalysable(f"{words[0].text} is not analysed")
        return None  # a loop header: what it runs is in its body (and any $(...) was analysed)
    if not words:
        return None
    while True:
        prog = _program(words[0])
        if prog in ("eval", "alias"):
            raise Unanalysable(f"{prog} builds the command at run time")
        if prog in WRAPPERS:
            rest = _strip_wrapper(prog, words[1:], depth, commands, lines)
            if not rest:
                break
            words = rest
            continue
        break
    if prog == "git":
        words = [words[0], *_strip_options(words[1:], "Cc", GIT_OPTIONS_WITH_VALUE)]
    texts = (prog, *(w.text for w in words[1:]))
    if prog == "watch":
        # watch runs its arguments, joined, through sh -c.
        rest = _strip_options(words[1:], "dn", frozenset({"--interval", "--differences"}))
        if any(w.expanded for w in rest):
            raise Unanalysable("watch with a command the shell expands")
        _analyse_script(" ".join(w.text for w in rest), depth + 1, commands, lines)
    if prog in SHELLS:
        script = _shell_script(words[1:])
        if script is not None:
            if script.expanded:
                raise Unanalysable(f"{prog} -c with a script the outer shell expands")
            _analyse_script(script.text, depth + 1, commands, lines)
        elif cmd.heredocs:
            for body, expands in cmd.heredocs:
                if expands and ("$" in body or "`" in body):
                    raise Unanalysable(f"a here-document fed to {prog} with expansions")
                _analyse_script(body, depth + 1, commands, lines)
    elif prog == "find":
        _find_exec(words[1:], depth, commands, lines)
    elif prog == "su":
        script = _option_value(words[1:], "c", "--command")
        if script is not None:
            _analyse_script(script.text, depth + 1, commands, lines)
    for body, expands in cmd.heredocs:
        if expands and ("$(" in body or "`" in body):
            raise Unanalysable("a here-document with a command substitution")
    return texts


def _strip_wrapper(prog: str, args: list[_Word], depth: int, commands: list[tuple[str, ...]], lines: list[str]) -> list[_Word]:
    """The command a wrapper runs (args after its options, assignments and fixed positionals)."""
    takes, long_takes, positionals = WRAPPERS[prog]
    i = 0
    while i < len(args):
        text = args[i].text
        if text == "--":
            i += 1
            break
        if prog in ("env", "sudo") and _ASSIGNMENT.match(text):
            i += 1
            continue
        if text.startswith("--"):
            name = text.split("=", 1)[0]
            if prog == "env" and name == "--split-string":
                return _split_string(
                    text.split("=", 1)[1] if "=" in text else (args[i + 1].text if i + 1 < len(args) else ""), args[i + 2 :]
                )
            i += 2 if name in long_takes and "=" not in text else 1
            continue
        if text.startswith("-") and len(text) > 1 and (prog != "busybox"):
            if prog == "nice" and text[1:].isdigit():
                i += 1
                continue
            letters = text[1:]
            for j, letter in enumerate(letters):
                if letter in takes:
                    value = letters[j + 1 :]
                    if prog == "env" and letter == "S":
                        return _split_string(
                            value or (args[i + 1].text if i + 1 < len(args) else ""), args[i + (1 if value else 2) :]
                        )
                    i += 1 if value else 2
                    break
            else:
                i += 1
            continue
        break
    i += positionals
    return args[i:]


GIT_OPTIONS_WITH_VALUE = frozenset({"--git-dir", "--work-tree", "--namespace", "--exec-path", "--config-env", "--super-prefix"})
"""git's own options before the subcommand that take a value (git -C dir push is git push)."""


def _strip_options(args: list[_Word], takes: str, long_takes: frozenset[str]) -> list[_Word]:
    """The arguments after a program's leading options (those in takes / long_takes consume a value)."""
    i = 0
    while i < len(args) and args[i].text.startswith("-") and len(args[i].text) > 1:
        text = args[i].text
        if text == "--":
            return args[i + 1 :]
        if text.startswith("--"):
            i += 2 if text in long_takes else 1
        else:
            letters = text[1:]
            j = next((k for k, c in enumerate(letters) if c in takes), -1)
            i += 2 if j == len(letters) - 1 else 1
    return args[i:]


def _split_string(text: str, rest: list[_Word]) -> list[_Word]:
    """env -S 'rm -rf' /: the string is split into words."""
    return [_Word(part) for part in text.split()] + rest


def _shell_script(args: list[_Word]) -> _Word | None:
    """The -c script of a shell's arguments (bash -c, bash -lc, sh -ec ...), if any."""
    wants_script = False
    for i, w in enumerate(args):
        text = w.text
        if wants_script:
            return w
        if text in ("-o", "+o", "-O", "+O", "--rcfile", "--init-file"):
            continue
        if text == "--":
            continue
        if text.startswith("-") and not text.startswith("--") and "c" in text[1:]:
            wants_script = True
            continue
        if text.startswith(("-", "+")):
            continue
        if i > 0 and args[i - 1].text in ("-o", "+o", "-O", "+O", "--rcfile", "--init-file"):
            continue
        return None
    return None


def _option_value(args: list[_Word], short: str, long: str) -> _Word | None:
    for i, w in enumerate(args):
        if w.text in (f"-{short}", long) and i + 1 < len(args):
            return args[i + 1]
        if w.text.startswith(f"{long}="):
            return _Word(w.text.split("=", 1)[1], w.expanded)
    return None


def _find_exec(args: list[_Word], depth: int, commands: list[tuple[str, ...]], lines: list[str]) -> None:
    """find ... -exec rm -rf {} ;  — the -exec command is a command too."""
    i = 0
    while i < len(args):
        if args[i].text in ("-exec", "-execdir", "-ok", "-okdir"):
            j = i + 1
            while j < len(args) and args[j].text not in (";", "+"):
                j += 1
            inner = args[i + 1 : j]
            if inner:
                words = _normalise(_Command(inner), depth + 1, commands, lines)
                if words is not None:
                    commands.append(words)
                    lines.append(" ".join(words))
            i = j
        i += 1


def _flags(program: str, args: tuple[str, ...]) -> tuple[set[str], set[str], list[str]]:
    """Short flags (letters), long flags and the other words of a command's arguments."""
    aliases = FLAG_ALIASES.get(program, {})
    short: set[str] = set()
    long: set[str] = set()
    rest: list[str] = []
    options = True
    for a in args:
        if options and a == "--":
            options = False
        elif options and a in aliases:
            short.add(aliases[a])
        elif options and a.startswith("--") and len(a) > 2:
            long.add(a)
        elif options and re.fullmatch(r"-[A-Za-z0-9]+", a):
            short.update(aliases.get(f"-{c}", c) for c in a[1:])
        else:
            rest.append(a)
    return short, long, rest


def glob_matches(words: tuple[str, ...], pattern: str) -> bool:
    """A glob rule against one normalised simple command.

    As a glob over the words joined by single spaces (a rule matches its
    command with more arguments after it: "git push*" / "rm -rf *"), or with
    combined short flags compared as sets: rm -rf == rm -fr == rm -r -f -v,
    and the remaining words matched in order.
    """
    rule = pattern.split()
    if not rule or not words:
        return False
    program = rule[0] if any(c in rule[0] for c in "*?[") else rule[0].rsplit("/", 1)[-1]
    text = " ".join(words)
    plain = " ".join([program, *rule[1:]])
    if fnmatch.fnmatchcase(text, plain) or fnmatch.fnmatchcase(text, plain + " *"):
        return True
    if not fnmatch.fnmatchcase(words[0], program):
        return False
    rule_args = tuple(rule[1:])
    if any(any(c in a for c in "*?[") and a.startswith("-") for a in rule_args):
        return False  # a flag written as a glob: only the plain match above applies
    rshort, rlong, rrest = _flags(words[0], rule_args)
    cshort, clong, crest = _flags(words[0], words[1:])
    if not rshort <= cshort or not rlong <= clong:
        return False
    want = " ".join(rrest)
    have = " ".join(crest)
    return not want or fnmatch.fnmatchcase(have, want) or fnmatch.fnmatchcase(have, want + " *")


def rule_matches(command: str, analysis: Analysis | None, pattern: str) -> bool:
    """A deny/confirm rule: a glob over each simple command, or a regex (/like this/) over the lines.

    A regex is tried on the raw line, each normalised line (pipelines keep
    their `|`) and each simple command; a glob on each simple command (and the
    raw line, collapsed, when the line could not be analysed). A regex is RE2's (linear in the line:
    a rule cannot stall the server on a long command); one RE2 cannot run, or that is not a valid
    regex at all, is patterns.UnsafePattern: the caller fails closed.
    """
    if len(pattern) > 1 and pattern.startswith("/") and pattern.endswith("/"):
        regex = compile_pattern(pattern[1:-1])
        texts = [command]
        if analysis is not None:
            texts += [*analysis.lines, *(" ".join(c) for c in analysis.commands)]
        return any(found(regex, t) is not None for t in texts)
    if analysis is None:
        collapsed = tuple(command.split())
        return bool(collapsed) and glob_matches(collapsed, pattern)
    return any(glob_matches(c, pattern) for c in analysis.commands)
