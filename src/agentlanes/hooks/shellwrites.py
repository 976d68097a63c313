"""Which files a shell command will change, read from its words (for the editor guard).

The command is tokenised the way the shell would split it (``shlex`` with the shell's
punctuation: ``;`` ``&&`` ``||`` ``|`` ``&`` ``(`` ``)`` and redirections), never matched
with regular expressions on the whole line. Understood:

- redirections that write: ``>``, ``>>``, ``>|``, ``&>``, ``&>>``, ``N>`` (not ``>&N``
  or ``/dev/*``);
- ``sed -i`` / ``--in-place`` (its files, not its script), ``tee``, ``mv`` (both sides),
  ``cp`` (the destination, or ``-t DIR``), ``rm``, ``rmdir``, ``unlink``, ``touch``,
  ``truncate``, ``dd of=FILE``;
- ``git mv``, ``git rm``, ``git checkout [...] -- PATH...``, ``git restore PATH...``
  (``git -C DIR`` moves where they apply);
- ``cd DIR`` earlier in the same command line, environment assignments (``A=1 cmd``),
  the wrappers ``sudo``, ``env``, ``command``, ``nohup``, ``time``, ``exec``, and
  ``bash -c '...'`` / ``sh -c '...'`` (read recursively); heredoc bodies are skipped.

Not understood (nothing is reported for them): programs that write on their own
(``python -c``, ``npm``, ``make``, editors, ``find -delete``, ``xargs``), words with
``$VAR``, ``~``, ``$(...)`` or backticks, ``eval``, aliases and functions. Globs
(``rm src/*.py``) are reported as patterns, not expanded. Standard library only: the
guard runs before every tool call.
"""

from __future__ import annotations

import os
import shlex

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator

# (absolute path or pattern, True when it is a glob to check as a pattern)
Target = tuple[str, bool]

SEPARATORS = frozenset({";", "&&", "||", "|", "&", "(", ")", "|&", ";;", ";&", ";;&"})
WRITE_REDIRECTS = frozenset({">", ">>", ">|", "&>", "&>>"})
READ_REDIRECTS = frozenset({"<", "<<<", "<>"})
WRAPPERS = frozenset({"sudo", "env", "command", "nohup", "time", "exec", "builtin"})
SHELLS = frozenset({"sh", "bash", "zsh", "dash", "ksh"})
GLOB_CHARS = frozenset("*?[")
UNKNOWABLE = ("$", "`", "~")


def written_paths(command: str, cwd: str) -> list[Target]:
    """Every file (or glob) the command will write, create, move or delete."""
    found: dict[Target, None] = {}
    for target in _walk(command, cwd, depth=0):
        found[target] = None
    return list(found)


def overwritten_paths(command: str, cwd: str) -> list[Target]:
    """The files the command's ``>`` redirections (``>``, ``>|``, ``&>``, ``N>``; not
    ``>>``) replace whole: a stale copy written there erases what others changed."""
    return list(dict.fromkeys(_walk(command, cwd, depth=0, truncating=True)))


def _walk(command: str, cwd: str, depth: int, truncating: bool = False) -> Iterator[Target]:
    if depth > 3:
        return
    try:
        tokens = _tokens(_drop_heredoc_bodies(command))
    except ValueError:
        return  # unbalanced quotes: the shell would refuse it too
    base = cwd
    for words, redirects in _simple_commands(tokens, truncating):
        for target in redirects:
            yield from _target(target, base)
        if not words:
            continue
        words = _unwrap(words)
        if not words:
            continue
        name = os.path.basename(words[0])
        if name == "cd":
            if len(words) > 1 and not _unknowable(words[1]) and words[1] != "-":
                base = os.path.join(base, words[1])
            continue
        if name in SHELLS and len(words) > 2 and words[1] == "-c":
            yield from _walk(words[2], base, depth + 1, truncating)
            continue
        if truncating:
            continue
        for raw, where in _command_writes(name, words[1:], base):
            yield from _target(raw, where)


# Commands that print files (an agent's way of reading one from its shell: Codex reads with
# ``sed -n``, ``cat``, ``nl``), and their options that take a value.
READERS = frozenset({"cat", "head", "tail", "nl", "less", "more", "bat"})
READER_VALUES = {"-n", "-c", "--lines", "--bytes", "-s", "-v", "-w", "-b"}


def read_paths(command: str, cwd: str) -> list[Target]:
    """The files the command prints (``cat``, ``head``, ``tail``, ``nl``, ``sed`` without
    ``-i``, ...): an agent that ran it has read them. Read as ``written_paths`` reads."""
    try:
        tokens = _tokens(_drop_heredoc_bodies(command))
    except ValueError:
        return []
    found: dict[Target, None] = {}
    base = cwd
    for words, _ in _simple_commands(tokens):
        words = _unwrap(words)
        if not words:
            continue
        name = os.path.basename(words[0])
        if name == "cd" and len(words) > 1 and not _unknowable(words[1]):
            base = os.path.join(base, words[1])
        elif name in READERS:
            for raw in _operands(words[1:], takes_value=READER_VALUES):
                found.update(dict.fromkeys(_target(raw, base)))
        elif name == "sed":
            for raw in _sed_files(words[1:], reading=True):
                found.update(dict.fromkeys(_target(raw, base)))
    return list(found)


def _drop_heredoc_bodies(command: str) -> str:
    """Leave out the lines of ``<<EOF`` ... ``EOF`` bodies (text, not commands)."""
    lines = command.split("\n")
    out: list[str] = []
    ending: list[tuple[str, bool]] = []
    for line in lines:
        if ending:
            delimiter, strip_tabs = ending[0]
            if (line.lstrip("\t") if strip_tabs else line) == delimiter:
                ending.pop(0)
            continue
        out.append(line)
        for found in _heredocs(line):
            ending.append(found)
    return "\n".join(out)


def _heredocs(line: str) -> list[tuple[str, bool]]:
    found = []
    rest = line
    while "<<" in rest:
        after = rest.partition("<<")[2]
        if after.startswith("<"):  # here-string <<<
            rest = after[1:]
            continue
        strip_tabs = after.startswith("-")
        after = after[1:] if strip_tabs else after
        word = after.lstrip().split(None, 1)[0] if after.strip() else ""
        delimiter = word.strip("'\"").rstrip(";&|)")
        if delimiter:
            found.append((delimiter, strip_tabs))
        rest = after
    return found


def _tokens(command: str) -> list[str]:
    lexer = shlex.shlex(_newlines_as_semicolons(command), posix=True, punctuation_chars=";&|()<>")
    lexer.whitespace_split = True
    lexer.commenters = ""
    return list(lexer)


def _newlines_as_semicolons(command: str) -> str:
    """An unquoted newline ends a command like ``;``; backslash-newline joins lines."""
    out: list[str] = []
    quote = ""
    i = 0
    while i < len(command):
        ch = command[i]
        if ch == "\\" and quote != "'" and i + 1 < len(command):
            if command[i + 1] == "\n":
                i += 2
                continue
            out.append(command[i : i + 2])
            i += 2
            continue
        if quote:
            if ch == quote:
                quote = ""
        elif ch in "'\"":
            quote = ch
        elif ch == "\n":
            ch = " ; "
        elif ch == "#" and (not out or out[-1][-1:].isspace()):
            # A comment runs to the end of the line.
            end = command.find("\n", i)
            i = len(command) if end < 0 else end
            continue
        out.append(ch)
        i += 1
    return "".join(out)


def _simple_commands(
    tokens: list[str], truncating: bool = False
) -> Iterator[tuple[list[str], list[str]]]:
    """(words, redirection targets that write; ``truncating``: only those that replace
    the file) of each simple command."""
    words: list[str] = []
    redirects: list[str] = []
    i = 0
    while i < len(tokens):
        token = tokens[i]
        if token in SEPARATORS:
            yield words, redirects
            words, redirects = [], []
            i += 1
            continue
        op = token
        if token.isdigit() and i + 1 < len(tokens) and tokens[i + 1][:1] in "<>":
            op = tokens[i + 1]  # 2>file: the fd number is not a word
            i += 1
        if op in WRITE_REDIRECTS or op in (">&", "&>", "<>"):
            target = tokens[i + 1] if i + 1 < len(tokens) else ""
            if op == ">&" and (target.isdigit() or target == "-"):
                pass  # duplicating a descriptor: no file
            elif truncating and op in (">>", "&>>", ">&", "<>"):
                pass  # appends (or a descriptor): the file's lines stay
            elif op != "<>" and target and target not in SEPARATORS:
                redirects.append(target)
            i += 2
            continue
        if op in READ_REDIRECTS or op == "<<" or op == "<<-" or op == "<&":
            i += 2
            continue
        if op != token:  # a digit that was not a redirection after all
            i -= 1
        words.append(token)
        i += 1
    yield words, redirects


def _unwrap(words: list[str]) -> list[str]:
    """Drop ``A=1`` assignments and wrappers (``sudo``, ``env`` ...) before the command."""
    i = 0
    while i < len(words):
        word = words[i]
        if "=" in word and not word.startswith("-") and word.split("=", 1)[0].isidentifier():
            i += 1
        elif os.path.basename(word) in WRAPPERS:
            i += 1
            while i < len(words) and words[i].startswith("-"):
                i += 1  # their own options (sudo -u x takes a value: good enough)
        else:
            break
    return words[i:]


def _command_writes(name: str, args: list[str], base: str) -> Iterator[tuple[str, str]]:
    """(path as written, the directory it is relative to) for the commands we know."""
    if name == "sed":
        yield from ((p, base) for p in _sed_files(args))
    elif name == "tee":
        yield from ((p, base) for p in _operands(args))
    elif name in ("rm", "rmdir", "unlink", "touch", "mv"):
        yield from ((p, base) for p in _operands(args, takes_value={"-t", "--target-directory"}))
        yield from ((p, base) for p in _option_values(args, ("-t", "--target-directory")))
    elif name == "truncate":
        yield from ((p, base) for p in _operands(args, takes_value={"-s", "--size", "-r"}))
    elif name == "cp":
        targets = _option_values(args, ("-t", "--target-directory"))
        operands = _operands(args, takes_value={"-t", "--target-directory", "-S"})
        if targets:
            yield from ((t, base) for t in targets)
        elif len(operands) >= 2:
            yield operands[-1], base
    elif name == "dd":
        yield from ((a[3:], base) for a in args if a.startswith("of="))
    elif name == "git":
        yield from _git_writes(args, base)


def _sed_files(args: list[str], reading: bool = False) -> list[str]:
    """The files ``sed`` edits in place (``reading``: the files it only prints)."""
    in_place = False
    script_given = False
    operands: list[str] = []
    i = 0
    while i < len(args):
        arg = args[i]
        if arg == "--":
            operands.extend(args[i + 1 :])
            break
        if arg in ("-e", "-f", "--expression", "--file", "-l", "--line-length"):
            script_given = script_given or arg in ("-e", "-f", "--expression", "--file")
            i += 2
            continue
        if arg.startswith(("--expression=", "--file=")):
            script_given = True
        elif arg.startswith("--in-place") or arg == "-i":
            in_place = True
            if arg == "-i" and i + 1 < len(args) and args[i + 1] == "":
                i += 1  # BSD sed: -i '' (an empty backup suffix)
        elif arg.startswith("-") and not arg.startswith("--") and len(arg) > 1:
            letters = arg[1:]
            if "i" in letters:
                in_place = True  # -i.bak, -ni, -Ei ...
            if letters.endswith(("e", "f")) and "i" not in letters:
                script_given = True
                i += 2
                continue
        elif not arg.startswith("-") or arg == "-":
            operands.append(arg)
        i += 1
    if in_place == reading:
        return []
    return operands if script_given else operands[1:]


def _operands(args: list[str], takes_value: set[str] | None = None) -> list[str]:
    takes_value = takes_value or set()
    out: list[str] = []
    i = 0
    while i < len(args):
        arg = args[i]
        if arg == "--":
            out.extend(args[i + 1 :])
            break
        if arg in takes_value:
            i += 2
            continue
        if not arg.startswith("-") or arg == "-":
            out.append(arg)
        i += 1
    return [a for a in out if a != "-"]


def _option_values(args: list[str], names: tuple[str, ...]) -> list[str]:
    out = []
    for i, arg in enumerate(args):
        if arg in names and i + 1 < len(args):
            out.append(args[i + 1])
        for name in names:
            if name.startswith("--") and arg.startswith(name + "="):
                out.append(arg[len(name) + 1 :])
    return out


def _git_writes(args: list[str], base: str) -> Iterator[tuple[str, str]]:
    i = 0
    where = base
    while i < len(args) and args[i].startswith("-"):
        if args[i] == "-C" and i + 1 < len(args):
            where = os.path.join(where, args[i + 1])
            i += 2
        elif args[i] in ("-c", "--git-dir", "--work-tree", "--namespace"):
            i += 2
        else:
            i += 1
    if i >= len(args):
        return
    sub, rest = args[i], args[i + 1 :]
    if sub in ("mv", "rm"):
        yield from ((p, where) for p in _operands(rest))
    elif sub == "checkout" and "--" in rest:
        yield from ((p, where) for p in rest[rest.index("--") + 1 :])
    elif sub == "restore" and not (
        ("--staged" in rest or "-S" in rest) and "--worktree" not in rest and "-W" not in rest
    ):
        yield from ((p, where) for p in _operands(rest, takes_value={"-s", "--source"}))


def _unknowable(word: str) -> bool:
    return not word or any(mark in word for mark in UNKNOWABLE)


def _target(raw: str, base: str) -> Iterator[Target]:
    if _unknowable(raw) or raw.startswith("/dev/"):
        return
    path = os.path.normpath(os.path.join(base, raw))
    yield path, bool(GLOB_CHARS.intersection(raw))
