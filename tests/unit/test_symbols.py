"""Symbols to line ranges on ``HEAD`` with tree-sitter (SPEC "Line-level claims": range
claims): a small sample file per language, classes and methods, read from a real git
repository's ``HEAD``; an unknown symbol is refused with the file's symbols."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from agentlanes.client.symbols import LISTED, SymbolError, claims_of, lines_of, symbols

SAMPLES = Path(__file__).resolve().parents[1] / "fixtures" / "symbols"


def read(name: str) -> bytes:
    return (SAMPLES / name).read_bytes()


@pytest.mark.parametrize(
    ("name", "symbol", "ranges"),
    [
        ("sample.py", "top", [(6, 7)]),
        ("sample.py", "Login", [(10, 23)]),
        ("sample.py", "Login.check", [(18, 23)]),  # with its decorator
        ("sample.py", "Login.check.inner", [(20, 21)]),
        ("sample.js", "top", [(4, 6)]),  # with its export
        ("sample.js", "Login.check", [(13, 15)]),
        ("sample.js", "Login.make", [(17, 19)]),
        ("sample.js", "helper", [(22, 24)]),  # a const holding an arrow function
        ("sample.ts", "User", [(1, 3)]),
        ("sample.ts", "Login.check", [(14, 16)]),
        ("sample.ts", "Login.handler", [(18, 20)]),
        ("sample.ts", "parse", [(23, 23), (24, 24), (25, 27)]),  # overloads: every one
        ("sample.ts", "Color", [(29, 32)]),
        ("sample.go", "Login", [(5, 7)]),
        ("sample.go", "Login.Check", [(9, 14)]),  # a method, by its receiver's type
        ("sample.go", "Top", [(16, 18)]),
        ("sample.rs", "Login.check", [(12, 14)]),
        ("sample.rs", "Login.fmt", [(18, 20)]),  # in a trait's impl block
        ("sample.rs", "Login", [(3, 5), (7, 15), (17, 21)]),  # the struct and its impls
        ("Sample.java", "Login", [(5, 26)]),
        ("Sample.java", "Login.check", [(12, 15), (17, 19)]),  # overloads, the annotation
        ("Sample.java", "Login.Token.value", [(22, 24)]),
    ],
)
def test_each_language_reads_classes_and_methods(
    name: str, symbol: str, ranges: list[tuple[int, int]]
) -> None:
    assert lines_of(name, read(name), symbol) == ranges


def test_an_unknown_symbol_is_refused_naming_the_files_symbols() -> None:
    with pytest.raises(SymbolError) as refused:
        lines_of("sample.py", read("sample.py"), "Login.chekc")
    message = str(refused.value)
    assert "no symbol 'Login.chekc'" in message
    assert "Login.check" in message and "top" in message and "later" in message


def test_the_list_of_symbols_in_a_refusal_is_bounded() -> None:
    source = "".join(f"def f{n}():\n    pass\n" for n in range(LISTED + 25)).encode()
    with pytest.raises(SymbolError) as refused:
        lines_of("many.py", source, "nope")
    listed = str(refused.value).split("; its symbols: ")[1]
    assert listed.endswith("(and 25 more)")
    assert listed.split(" (and")[0].split(", ") == [f"f{n}" for n in range(LISTED)]


def test_a_language_not_read_is_refused() -> None:
    with pytest.raises(SymbolError, match="symbols are read in"):
        symbols("notes.md", b"# title\n")


def git(repo: Path, *args: str) -> str:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(HOME=str(repo.parent), GIT_CONFIG_NOSYSTEM="1", GIT_CONFIG_GLOBAL=os.devnull)
    done = subprocess.run(
        ["git", *args], cwd=repo, env=env, capture_output=True, text=True, check=True
    )
    return done.stdout.strip()


def test_claims_are_read_on_head_whatever_the_work_tree_holds(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    (repo / "src").mkdir(parents=True)
    for name in ("sample.py", "sample.go"):
        (repo / "src" / name).write_bytes(read(name))
    git(repo, "init", "-q")
    git(repo, "add", ".")
    git(repo, "-c", "user.name=T", "-c", "user.email=t@example.com", "commit", "-q", "-m", "b")
    # Lines added above Login in the work tree: the claim still counts HEAD's lines.
    (repo / "src/sample.py").write_text("# new\n# lines\n" + read("sample.py").decode())
    specs = ["src/sample.py#Login.check", "./src/sample.py#top", "src/sample.go#Login.Check"]
    claims = claims_of(str(repo), specs)
    base_py = git(repo, "rev-parse", "HEAD:src/sample.py")
    assert claims == [
        {"path": "src/sample.py", "base": base_py, "ranges": [[18, 23]], "symbol": "Login.check"},
        {"path": "src/sample.py", "base": base_py, "ranges": [[6, 7]], "symbol": "top"},
        {
            "path": "src/sample.go",
            "base": git(repo, "rev-parse", "HEAD:src/sample.go"),
            "ranges": [[9, 14]],
            "symbol": "Login.Check",
        },
    ]
    with pytest.raises(SymbolError, match="not a file at HEAD"):
        claims_of(str(repo), ["src/new.py#f"])
    with pytest.raises(SymbolError, match="its symbols: top, Login"):
        claims_of(str(repo), ["src/sample.py#Logout"])
    with pytest.raises(SymbolError, match="PATH#Name"):
        claims_of(str(repo), ["src/sample.py#"])
