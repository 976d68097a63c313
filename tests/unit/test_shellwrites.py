"""Which files a Bash command writes, as the guard reads it (shlex tokens, not regexes)."""

from __future__ import annotations

import pytest

from agentlanes.hooks.shellwrites import written_paths

CASES = [
    ("sed -i s/x/y/ src/api/app.py", ["src/api/app.py"]),
    ("sed -i.bak -e 's/a/b/' a.py b.py", ["a.py", "b.py"]),
    ("sed --in-place=.orig 's/a/b/' a.py", ["a.py"]),
    ("sed -Ei 's/a/b/' a.py", ["a.py"]),
    ("sed 's/x/y/' a.py > out.txt", ["out.txt"]),
    ("sed -n p a.py", []),
    (
        "echo hi >> log.txt && cat x | tee -a t1 t2; mv a b; cp -r s1 s2 dest/",
        ["log.txt", "t1", "t2", "a", "b", "dest"],
    ),
    ("ls 2>&1 >/dev/null; echo x 2>err.txt", ["err.txt"]),
    ("echo x &> both.log", ["both.log"]),
    ("cd src && rm -rf api/*.py old", ["src/api/*.py", "src/old"]),
    (
        "git -C sub mv x y && git checkout main -- f1 f2 && git checkout main",
        ["sub/x", "sub/y", "f1", "f2"],
    ),
    ("git rm --cached z; git restore --staged a; git restore b", ["z", "b"]),
    ("FOO=1 sudo -E tee conf <<EOF\nrm danger\nEOF\ntouch done", ["conf", "done"]),
    ("bash -c 'rm -f inner.txt' && python -c \"open('x','w')\"", ["inner.txt"]),
    ("cat < in.txt > 'with space.txt'", ["with space.txt"]),
    ('echo "a\nb" > multi.txt # rm comment', ["multi.txt"]),
    ("rm $HOME/x ~/y `z`", []),
    ("cp -t target a b", ["target"]),
    ("dd if=/dev/zero of=disk.img bs=1", ["disk.img"]),
    ("grep -r foo src | head", []),
    ("echo 'unbalanced", []),
    ("printf x \\\n  > joined.txt", ["joined.txt"]),
]


@pytest.mark.parametrize(("command", "expected"), CASES)
def test_written_paths(command: str, expected: list[str]) -> None:
    found = [path.removeprefix("/repo/") for path, _ in written_paths(command, "/repo")]
    assert found == expected


def test_globs_are_flagged_as_patterns_and_paths_are_absolute() -> None:
    assert written_paths("rm src/*.py ../up.txt", "/repo/sub") == [
        ("/repo/sub/src/*.py", True),
        ("/repo/up.txt", False),
    ]
