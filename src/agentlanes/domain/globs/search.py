"""The product search behind every overlap verdict: two automata stepped together over
path segments, memoised by (positions, rest shape) so that live patterns of the same
shape share one answer; it also spells the shortest example path."""

from __future__ import annotations

from . import segments as sg
from .automaton import _END, _GLOB, _SEG, GLOBSTAR, Automaton, Element
from .segments import Segment


class _Memo:
    """Verdicts on rests: the shape of what is left of a pattern -> an int
    naming the positions and the rest -> words. Bounded: emptied when it holds
    ``cap`` verdicts.

    Keyed by a string, then an int, never by a tuple made per verdict: once
    full, a server replaces memoised verdicts all the time, and each stored
    tuple would be one more object for the garbage collector's young passes
    to walk (docs/operations.md).
    """

    def __init__(self, cap: int) -> None:
        self.cap = cap
        self.size = 0
        self.by_shape: dict[str | tuple[str, int], dict[int, tuple[str, ...] | None]] = {}

    def table(self, shape: str | tuple[str, int]) -> dict[int, tuple[str, ...] | None]:
        table = self.by_shape.get(shape)
        if table is None:
            table = self.by_shape[shape] = {}
        return table

    def store(
        self, table: dict[int, tuple[str, ...] | None], key: int, words: tuple[str, ...] | None
    ) -> None:
        if self.size >= self.cap:
            self.clear()  # the caller's table goes with the rest
            return
        table[key] = words
        self.size += 1

    def clear(self) -> None:
        self.by_shape.clear()
        self.size = 0


# What a pattern accepts from some positions that a rest accepts from its
# start; and, after a literal lead, from where the lead left the rest.
_REST_MEMO = _Memo(1 << 18)
_LEAD_MEMO = _Memo(1 << 16)
_SERIAL_BITS = 48  # rest serials stay below 2 ** 48


def _search(
    x: Automaton, xmask: int, y: Automaton, nonempty: bool, ymask: int | None = None
) -> tuple[str, ...] | None:
    """Shortest words accepted by ``x`` from ``xmask`` and by ``y`` from ``ymask``
    (default: its start).

    Breadth-first over pairs (position of x, position of y), one level per
    word read, with all positions of the larger automaton at once as a bit
    mask: a level costs one step per active position of the smaller one.
    Without ``nonempty`` (nothing read yet) the words must not be empty.
    """
    if ymask is None:
        ymask = y.starts
    # Iterate over the smaller automaton's positions, counting x's from the
    # lowest live one: the words found then depend only on x's shape from there.
    swapped = len(x.kinds) - ((xmask & -xmask).bit_length() - 1) > len(y.kinds)
    if swapped:
        x, y = y, x
        xmask, ymask = ymask, xmask
    cur: dict[int, int] = {}
    m = xmask
    while m:
        low = m & -m
        m ^= low
        cur[low.bit_length() - 1] = ymask
    kinds, segs, yglob, ywit = x.kinds, x.segs, y.globstars, y.witnessed
    if nonempty:
        for p, mask in cur.items():
            if kinds[p] == _END and mask & y.ends:
                return ()
        seen = dict(cur)
    else:
        seen = {}
    levels = [cur]
    compat: dict[Segment, int] = {}
    while cur:
        nxt: dict[int, int] = {}
        for p, mask in cur.items():
            kind = kinds[p]
            if kind == _SEG:
                seg = segs[p]
                ok = compat.get(seg)  # type: ignore[arg-type]
                if ok is None:
                    ok = compat[seg] = y.compatible(seg)  # type: ignore[index,arg-type]
                stepped = ((mask & ok) << 1) | (mask & yglob if sg.witness(seg) else 0)
                target = p + 1
            elif kind == _GLOB:
                stepped = ((mask & ywit) << 1) | (mask & yglob)
                target = p
            else:
                continue
            if stepped:
                stepped = y.closure(stepped)
                nxt[target] = nxt.get(target, 0) | stepped
                done = stepped & y.ends
                if done and kinds[target + (kind == _GLOB)] == _END:  # complete pair: stop
                    end = target + (kind == _GLOB)
                    return _spell(x, y, [*levels, nxt], end, done.bit_length() - 1)
        for p in list(nxt):
            if kinds[p] == _GLOB:  # a GLOBSTAR may match nothing
                nxt[p + 1] = nxt.get(p + 1, 0) | nxt[p]
        for p in list(nxt):
            new = nxt[p] & ~seen.get(p, 0)
            if new:
                nxt[p] = new
                seen[p] = seen.get(p, 0) | new
            else:
                del nxt[p]
        levels.append(nxt)
        for p, mask in nxt.items():
            if kinds[p] == _END and mask & y.ends:
                b = (mask & y.ends).bit_length() - 1
                return _spell(x, y, levels, p, b)
        cur = nxt
    return None


def _spell(
    x: Automaton, y: Automaton, levels: list[dict[int, int]], p: int, b: int
) -> tuple[str, ...]:
    """Walk back from (p, b) at the last level, one word per level."""
    words: list[str] = []
    for k in range(len(levels) - 1, 0, -1):
        before = levels[k - 1]
        found = None
        for p_step in (p, p - 1) if p and x.kinds[p - 1] == _GLOB else (p,):
            for b_step in (b, b - 1) if b and y.kinds[b - 1] == _GLOB else (b,):
                for p_from, word_x in _preds(x, p_step):
                    row = before.get(p_from, 0)
                    if not row:
                        continue
                    for b_from, word_y in _preds(y, b_step):
                        if not (row >> b_from) & 1:
                            continue
                        word = _common_word(word_x, word_y)
                        if word is not None:
                            found = (p_from, b_from, word)
                            break
                    if found:
                        break
                if found:
                    break
            if found:
                break
        if found is None:  # pragma: no cover - the forward pass guarantees one
            raise AssertionError("no predecessor while spelling an example")
        p, b, word = found
        words.append(word)
    return tuple(reversed(words))


def _preds(auto: Automaton, q: int) -> list[tuple[int, Element]]:
    """(position, element read) pairs that reach ``q`` by reading one segment."""
    out: list[tuple[int, Element]] = []
    if q and auto.kinds[q - 1] == _SEG:
        out.append((q - 1, auto.segs[q - 1]))  # type: ignore[arg-type]
    if auto.kinds[q] == _GLOB:
        out.append((q, GLOBSTAR))
    return out


def _common_word(a: Element, b: Element) -> str | None:
    if a is GLOBSTAR and b is GLOBSTAR:
        return "a"
    if a is GLOBSTAR:
        return sg.witness(b)
    if b is GLOBSTAR:
        return sg.witness(a)
    return sg.intersect(a, b) if sg.may_intersect(a, b) else None
