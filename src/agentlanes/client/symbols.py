"""Symbols to line ranges (SPEC "Line-level claims": range claims).

``lanes checkin --files 'src/auth.py#Login.check'`` (and the MCP ``checkin``) claims the
lines of one symbol rather than the whole file: two agents working on two functions of one
file both get in. The symbol is read on ``HEAD`` (the file's blob there, ``git show
HEAD:path``; the claim's ``base`` is that blob's id, so the lines count where the other
agents' edits count them) with tree-sitter and its maintained grammar wheels (no download
at run time) for Python, JavaScript, TypeScript (and TSX), Go, Rust and Java.

A symbol is a definition's name, qualified by the definitions around it: ``Login``,
``Login.check``, ``parse.inner``; a Go method is ``Type.Method``, a Rust function in an
``impl`` block ``Type.function``. Its lines are the definition's, with what belongs to it
above (Python decorators, an ``export``); a name defined twice (overloads, a struct and
its ``impl`` blocks) claims every place. An unknown symbol is refused, naming the file's
symbols (at most ``LISTED``).

Imported only when a ``#`` is used: the CLI stays fast without it.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from typing import Any

TYPE_CHECKING = False
if TYPE_CHECKING:
    from tree_sitter import Node, Parser

Range = tuple[int, int]

# Symbols named in a refusal, at most (then how many more).
LISTED = 40
GIT_TIMEOUT = 10.0


class SymbolError(Exception):
    """A symbol that cannot be read: an unknown name (with the file's symbols), a file not
    at ``HEAD``, a language not read."""


@dataclass(frozen=True, eq=False)  # one value per language: hashed by identity (cached)
class Grammar:
    """How one language names its definitions: the node types that define a symbol (named
    by their ``name`` field unless ``named`` says otherwise), the ones whose lines go to
    the definition inside them (decorators, ``export``), and a language's own readings."""

    language: Callable[[], Any]
    defines: frozenset[str]
    wraps: frozenset[str] = frozenset()
    named: Mapping[str, Callable[[Node], str | None]] = field(default_factory=dict)


def _text(node: Node | None) -> str | None:
    return None if node is None or node.text is None else node.text.decode("utf-8", "replace")


def _field(node: Node, name: str = "name") -> str | None:
    return _text(node.child_by_field_name(name))


def _first_type(node: Node | None) -> str | None:
    """The first type name in ``node`` (``*Server`` → ``Server``, ``Foo<T>`` → ``Foo``)."""
    if node is None:
        return None
    if node.type in ("type_identifier", "identifier"):
        return _text(node)
    for child in node.named_children:
        if child.type in ("type_arguments", "type_parameters"):
            continue
        found = _first_type(child)
        if found:
            return found
    return None


def _go_method(node: Node) -> str | None:
    """``func (l *Login) Check()`` → ``Login.Check``."""
    name = _field(node)
    receivers = node.child_by_field_name("receiver")
    declared = receivers.named_children if receivers is not None else []
    receiver = _first_type(declared[0].child_by_field_name("type")) if declared else None
    return f"{receiver}.{name}" if receiver and name else name


def _rust_impl(node: Node) -> str | None:
    return _first_type(node.child_by_field_name("type"))


# JavaScript and TypeScript: a const (or class field) holding a function or a class.
_FUNCTION_VALUES = frozenset(
    {"arrow_function", "function_expression", "function", "generator_function", "class"}
)


def _js_binding(node: Node) -> str | None:
    value = node.child_by_field_name("value")
    if value is None or value.type not in _FUNCTION_VALUES:
        return None
    name = node.child_by_field_name("name") or node.child_by_field_name("property")
    return _text(name) if name is not None and "identifier" in name.type else None


_JS_DEFINES = frozenset(
    {
        "function_declaration",
        "generator_function_declaration",
        "class_declaration",
        "method_definition",
        "variable_declarator",
        "field_definition",
    }
)
_JS_WRAPS = frozenset({"export_statement", "lexical_declaration", "variable_declaration"})
_JS_NAMED = {"variable_declarator": _js_binding, "field_definition": _js_binding}
_TS_DEFINES = _JS_DEFINES | {
    "abstract_class_declaration",
    "interface_declaration",
    "type_alias_declaration",
    "enum_declaration",
    "method_signature",
    "abstract_method_signature",
    "function_signature",
    "public_field_definition",
    "internal_module",
    "module",
}
_TS_NAMED = {**_JS_NAMED, "public_field_definition": _js_binding}


def _python() -> Any:
    import tree_sitter_python

    return tree_sitter_python.language()


def _javascript() -> Any:
    import tree_sitter_javascript

    return tree_sitter_javascript.language()


def _typescript() -> Any:
    import tree_sitter_typescript

    return tree_sitter_typescript.language_typescript()


def _tsx() -> Any:
    import tree_sitter_typescript

    return tree_sitter_typescript.language_tsx()


def _go() -> Any:
    import tree_sitter_go

    return tree_sitter_go.language()


def _rust() -> Any:
    import tree_sitter_rust

    return tree_sitter_rust.language()


def _java() -> Any:
    import tree_sitter_java

    return tree_sitter_java.language()


PYTHON = Grammar(
    _python,
    frozenset({"function_definition", "class_definition"}),
    frozenset({"decorated_definition"}),
)
JAVASCRIPT = Grammar(_javascript, _JS_DEFINES, _JS_WRAPS, _JS_NAMED)
TYPESCRIPT = Grammar(_typescript, _TS_DEFINES, _JS_WRAPS, _TS_NAMED)
TSX = Grammar(_tsx, _TS_DEFINES, _JS_WRAPS, _TS_NAMED)
GO = Grammar(
    _go,
    frozenset({"function_declaration", "method_declaration", "type_spec"}),
    frozenset({"type_declaration"}),
    {"method_declaration": _go_method},
)
RUST = Grammar(
    _rust,
    frozenset(
        {
            "function_item",
            "function_signature_item",
            "struct_item",
            "enum_item",
            "union_item",
            "trait_item",
            "impl_item",
            "mod_item",
            "type_item",
            "const_item",
            "static_item",
            "macro_definition",
        }
    ),
    named={"impl_item": _rust_impl},
)
JAVA = Grammar(
    _java,
    frozenset(
        {
            "class_declaration",
            "interface_declaration",
            "enum_declaration",
            "record_declaration",
            "annotation_type_declaration",
            "method_declaration",
            "constructor_declaration",
        }
    ),
)

GRAMMARS: dict[str, Grammar] = {
    ".py": PYTHON,
    ".pyi": PYTHON,
    ".js": JAVASCRIPT,
    ".mjs": JAVASCRIPT,
    ".cjs": JAVASCRIPT,
    ".jsx": JAVASCRIPT,
    ".ts": TYPESCRIPT,
    ".mts": TYPESCRIPT,
    ".cts": TYPESCRIPT,
    ".tsx": TSX,
    ".go": GO,
    ".rs": RUST,
    ".java": JAVA,
}


def grammar_of(path: str) -> Grammar:
    ext = os.path.splitext(path)[1].lower()
    found = GRAMMARS.get(ext)
    if found is None:
        raise SymbolError(
            f"{path}: symbols are read in {', '.join(sorted(GRAMMARS))} files only; "
            "claim the file (or its lines) instead"
        )
    return found


@cache
def _parser(grammar: Grammar) -> Parser:
    from tree_sitter import Language, Parser

    return Parser(Language(grammar.language()))


def symbols(path: str, source: bytes) -> dict[str, list[Range]]:
    """Every symbol of a file (by ``path``'s extension) and its lines, 1-based and
    inclusive, in the order they start."""
    grammar = grammar_of(path)
    tree = _parser(grammar).parse(source)
    out: dict[str, list[Range]] = {}
    _visit(tree.root_node, "", None, grammar, out)
    return out


def _visit(
    node: Node, prefix: str, top: int | None, grammar: Grammar, out: dict[str, list[Range]]
) -> None:
    """Walk ``node``'s children, qualifying each definition by those around it; ``top``:
    the first line of a wrapper (decorators, ``export``) whose lines go to the definition
    inside."""
    for child in node.named_children:
        kind = child.type
        name = None
        if kind in grammar.defines:
            reader = grammar.named.get(kind)
            name = reader(child) if reader is not None else _field(child)
        if name:
            qualified = f"{prefix}.{name}" if prefix else name
            start = child.start_point.row + 1 if top is None else top
            end = child.end_point.row + (1 if child.end_point.column else 0)
            out.setdefault(qualified, []).append((start, max(end, start)))
            _visit(child, qualified, None, grammar, out)
        elif kind in grammar.wraps:
            _visit(child, prefix, child.start_point.row + 1 if top is None else top, grammar, out)
        else:
            _visit(child, prefix, None, grammar, out)


def lines_of(path: str, source: bytes, symbol: str) -> list[Range]:
    """The lines of ``symbol`` in a file; ``SymbolError`` naming the file's symbols when it
    has none such."""
    found = symbols(path, source)
    if symbol in found:
        return sorted(found[symbol])
    names = list(found)
    listed = ", ".join(names[:LISTED])
    more = f" (and {len(names) - LISTED} more)" if len(names) > LISTED else ""
    raise SymbolError(
        f"{path} has no symbol {symbol!r} at HEAD; its symbols: {listed or 'none'}{more}"
    )


def is_symbol(spec: str) -> bool:
    """Whether a ``--files`` value names a symbol (``path#Symbol``)."""
    return "#" in spec


def split(spec: str) -> tuple[str, str]:
    """``src/auth.py#Login.check`` → (``src/auth.py``, ``Login.check``)."""
    path, _, symbol = spec.rpartition("#")
    path = path.removeprefix("./")
    if not path or not symbol:
        raise SymbolError(f"{spec!r}: write a symbol as PATH#Name or PATH#Class.method")
    return path, symbol


def _git(root: str, *args: str) -> bytes:
    try:
        done = subprocess.run(
            ["git", "--literal-pathspecs", *args],
            cwd=root,
            capture_output=True,
            timeout=GIT_TIMEOUT,
        )
    except (OSError, subprocess.SubprocessError) as exc:
        raise SymbolError(f"git could not be run in {root}: {exc}") from None
    if done.returncode:
        raise SymbolError(done.stderr.decode("utf-8", "replace").strip() or "git failed")
    return done.stdout


def claims_of(root: str, specs: Sequence[str]) -> list[dict[str, Any]]:
    """Range claims (the wire shape: ``{"path", "base", "ranges", "symbol"}``) for
    ``path#Symbol`` specs, read on ``HEAD`` in the repository at ``root`` (paths relative
    to it)."""
    out: list[dict[str, Any]] = []
    blobs: dict[str, tuple[str, bytes]] = {}
    for spec in specs:
        path, symbol = split(spec)
        if path not in blobs:
            try:
                base = _git(root, "rev-parse", "--verify", "-q", f"HEAD:{path}").decode().strip()
            except SymbolError:
                raise SymbolError(
                    f"{path} is not a file at HEAD: claim it without a symbol"
                ) from None
            blobs[path] = (base, _git(root, "cat-file", "blob", base))
        base, source = blobs[path]
        ranges = lines_of(path, source, symbol)
        out.append(
            {"path": path, "base": base, "ranges": [list(r) for r in ranges], "symbol": symbol}
        )
    return out


def split_claims(
    root: str | None, files: Sequence[str] | None
) -> tuple[list[str] | None, list[dict[str, Any]] | None]:
    """``--files`` (or the MCP ``declared_files``) split into the globs claimed whole and
    the ``path#Symbol`` ones, read into range claims on ``HEAD`` in the repository at
    ``root``. Nothing is parsed when no ``#`` is used."""
    if files is None or not any(is_symbol(f) for f in files):
        return None if files is None else list(files), None
    if not root:
        raise SymbolError("path#Symbol is read on HEAD: it needs a git repository")
    claims = claims_of(root, [f for f in files if is_symbol(f)])
    return [f for f in files if not is_symbol(f)], claims
