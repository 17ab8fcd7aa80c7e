"""Simplification and satisfiability of symbolic scalar expressions (PyPTO's
SymbolicScalar.simplify and SymbolicScalar.check; nodes as in lang/symbolic.py).

simplify() works on sums as linear forms: a sum, difference, negation or product by a constant
becomes {atom: coefficient} plus a constant, atoms being symbols and the non-linear parts (products
of unknowns, divisions, minima, ...) in order of first appearance; like terms merge and the form
is written back positive terms first ("((x-y)+3)"). Comparisons, min / max and the logical
operators cancel or absorb what they share. Every rewrite is an identity of integer arithmetic
with C++'s truncating division, except two PyPTO makes for scalars that are never negative:
`(x + 6) % 3` drops the addends the divisor divides, and `x && 1` is x. check() simplifies
without those two.

check() decides a conjunction: UNSAT when the conditions contradict, SAT when each provably holds,
UNKNOWN otherwise. Comparisons whose sides are affine (symbols, calls, divisions and moduli taken
as variables, times integer constants) feed integer reasoning: equalities are solved for a
variable with coefficient +-1 (after dividing by the gcd of their coefficients, which must divide
the constant) and substituted everywhere, to a fixed point; the rest go through Gaussian
elimination over the rationals; inequalities bound their gcd-reduced, sign-fixed left side (x + 2
>= n and x + 8 <= n both bound n - x) and a lower bound above an upper bound is a contradiction.
Symbols pinned to constants evaluate every condition that mentions only them (also divisions,
moduli, min / max: `x == 6, x % 4 == 3` is UNSAT). Products of unknowns, min / max of unknowns
and disjunctions are not reasoned about: they never make a verdict UNSAT unless they evaluate.
"""
from __future__ import annotations

import math
from fractions import Fraction
from typing import Optional

from .. import _core
from .symbolic import (COMPARISONS, SatStatus, SymbolicExpr, SymbolicScalar, apply, const, evaluate, is_const,
                       render)

__all__ = ["simplify", "check"]

_BOOLEAN = COMPARISONS + ("&&", "||", "not")
_VARIABLES = ("s", "call", "/", "%")  # what check() reasons about as integer variables
_SWAPPED = {">": "<", ">=": "<="}


# --- linear forms -----------------------------------------------------------------------------

def linear(node: tuple) -> tuple:
    """(terms, constant): node as sum(coefficient * atom) + constant, atoms in order of first
    appearance (a term whose coefficient cancels to 0 keeps its place)."""
    kind = node[0]
    if kind == "c":
        return {}, node[1]
    if kind in ("+", "-"):
        (ta, ka), (tb, kb) = linear(node[1]), linear(node[2])
        sign = 1 if kind == "+" else -1
        terms = dict(ta)
        for atom, coef in tb.items():
            terms[atom] = terms.get(atom, 0) + sign * coef
        return terms, ka + sign * kb
    if kind in ("neg", "pos"):
        terms, k = linear(node[1])
        sign = -1 if kind == "neg" else 1
        return {atom: sign * coef for atom, coef in terms.items()}, sign * k
    if kind == "*" and (is_const(node[1]) or is_const(node[2])):
        factor, other = (node[1][1], node[2]) if is_const(node[1]) else (node[2][1], node[1])
        terms, k = linear(other)
        return {atom: factor * coef for atom, coef in terms.items()}, factor * k
    return {node: 1}, 0


def _scaled(atom: tuple, coef: int) -> tuple:
    return atom if coef == 1 else ("*", atom, const(coef))


def from_linear(terms: dict, k: int) -> tuple:
    """The node of a linear form: positive terms, then the negative ones subtracted, then the
    constant; a common factor of products is taken out ("((y+z)*x)")."""
    items = [(atom, coef) for atom, coef in terms.items() if coef != 0]
    if not items:
        return const(k)
    factored = _common_factor(items) if k == 0 else None
    if factored is not None:
        return factored
    node = None
    positive = [(a, c) for a, c in items if c > 0]
    if not positive and k > 0:
        node, k = const(k), 0
    for atom, coef in positive:
        node = _scaled(atom, coef) if node is None else ("+", node, _scaled(atom, coef))
    for atom, coef in ((a, c) for a, c in items if c < 0):
        node = ("neg", _scaled(atom, -coef)) if node is None else ("-", node, _scaled(atom, -coef))
    if k:
        node = ("+", node, const(k)) if k > 0 else ("-", node, const(-k))
    return node


def _common_factor(items: list) -> Optional[tuple]:
    """x*y + x*z as (y+z)*x: every term a product (coefficient 1) sharing a factor."""
    if len(items) < 2 or any(coef != 1 or atom[0] != "*" for atom, coef in items):
        return None
    for factor in items[0][0][1:]:
        if all(factor in atom[1:] for atom, _ in items):
            rest = {(atom[2] if atom[1] == factor else atom[1]): 1 for atom, _ in items}
            return ("*", from_linear(rest, 0), factor)
    return None


# --- simplify ---------------------------------------------------------------------------------

def simplify(node: tuple, exact: bool = False) -> tuple:
    """node rewritten as PyPTO's simplifier does (see the module doc); exact=True leaves out the
    two rewrites that assume non-negative scalars."""
    kind = node[0]
    if kind in ("c", "s", "call"):
        return node
    args = [simplify(a, exact) for a in node[1:]]
    if all(is_const(a) for a in args):
        value = apply(kind, *[a[1] for a in args])
        if value is not None:  # a division by zero stays as it is
            return const(value)
    if kind in ("+", "-", "neg", "pos") or (kind == "*" and (is_const(args[0]) or is_const(args[1]))):
        return from_linear(*linear((kind, *args)))
    rule = _RULES.get(kind)
    return rule(*args, exact) if rule else (kind, *args)


def _product(a: tuple, b: tuple, exact: bool) -> tuple:
    """Products of unknowns: coefficients pulled out to the right, min(x, y) * max(x, y) is x * y."""
    (ta, ka), (tb, kb) = linear(a), linear(b)
    if ka or kb or len(ta) != 1 or len(tb) != 1:
        return ("*", a, b)
    (atom_a, ca), = ta.items()
    (atom_b, cb), = tb.items()
    if {atom_a[0], atom_b[0]} == {"min", "max"} and set(atom_a[1:]) == set(atom_b[1:]):
        minimum = atom_a if atom_a[0] == "min" else atom_b
        atom_a, atom_b = minimum[1], minimum[2]
    return from_linear({("*", atom_a, atom_b): ca * cb}, 0)


def _divide(a: tuple, b: tuple, exact: bool) -> tuple:
    if is_const(b) and b[1] > 0:
        c = b[1]
        terms, k = linear(a)
        if k % c == 0 and all(coef % c == 0 for coef in terms.values()):  # exactly divisible
            return from_linear({atom: coef // c for atom, coef in terms.items()}, k // c)
        if a[0] == "/" and is_const(a[2]) and a[2][1] > 0:  # (x / c1) / c2 is x / (c1 * c2)
            return ("/", a[1], const(a[2][1] * c))
    return ("/", a, b)


def _modulo(a: tuple, b: tuple, exact: bool) -> tuple:
    if is_const(b) and b[1] > 0:
        c = b[1]
        terms, k = linear(a)
        if k % c == 0 and all(coef % c == 0 for coef in terms.values()):
            return const(0)
        if not exact:  # PyPTO drops the addends c divides (exact for non-negative values)
            kept = {atom: coef for atom, coef in terms.items() if coef % c}
            rest = k if k % c else 0
            if len(kept) < len([coef for coef in terms.values() if coef]) or rest != k:
                return ("%", from_linear(kept, rest), b)
    return ("%", a, b)


def _extremum(op: str):
    other = "max" if op == "min" else "min"

    def rule(a: tuple, b: tuple, exact: bool) -> tuple:
        if a == b:
            return a
        if is_const(a):
            a, b = b, a  # the constant on the right
        if b[0] == other and a in b[1:]:  # min(x, max(x, y)) is x
            return a
        if a[0] == other and b in a[1:]:
            return b
        if a[0] == op and b in a[1:]:  # min(min(x, y), y) is min(x, y)
            return a
        if b[0] == op and a in b[1:]:
            return b
        if is_const(b) and a[0] == op and is_const(a[2]):  # min(min(x, 1), 2) is min(x, 1)
            return (op, a[1], const(apply(op, a[2][1], b[1])))
        shared = _shared_part(a, b, op, exact)
        if shared is not None:
            return shared
        if op == "min":
            clamp = _clamp_of_clamp(a, b)
            if clamp is not None:
                return clamp
        return (op, a, b)
    return rule


def _shared_part(a: tuple, b: tuple, op: str, exact: bool) -> Optional[tuple]:
    """min(x + y, x + z) is x + min(y, z): the terms both sides share (equal coefficients, and the
    constant when both have the same) are taken out."""
    (ta, ka), (tb, kb) = linear(a), linear(b)
    common = {atom: coef for atom, coef in ta.items() if coef and tb.get(atom) == coef}
    shared_k = ka if ka == kb else 0
    if not common and not shared_k:
        return None
    rest_a = from_linear({t: c for t, c in ta.items() if t not in common}, ka - shared_k)
    rest_b = from_linear({t: c for t, c in tb.items() if t not in common}, kb - shared_k)
    inner = simplify((op, rest_a, rest_b), exact)
    terms, k = linear(inner)
    return from_linear({**common, **terms}, k + shared_k)


def _clamp_of_clamp(a: tuple, b: tuple) -> Optional[tuple]:
    """min(max(min(max(v, l1), h1) - c, l2), h2) is min(max(v - c, l2), h2) when [l2, h2] lies
    within [l1 - c, h1 - c]: the inner clamp cannot change what the outer one keeps."""
    if not (is_const(b) and a[0] == "max" and is_const(a[2])):
        return None
    terms, k = linear(a[1])
    if len(terms) != 1:
        return None
    (inner, coef), = terms.items()
    if coef != 1 or inner[0] != "min" or not is_const(inner[2]) or inner[1][0] != "max" or not is_const(inner[1][2]):
        return None
    low1, high1, low2, high2, shift = inner[1][2][1], inner[2][1], a[2][1], b[1], -k
    if low1 - shift > low2 or high1 - shift < high2:
        return None
    value_terms, value_k = linear(inner[1][1])
    return ("min", ("max", from_linear(value_terms, value_k - shift), a[2]), b)


def _compare(op: str):
    def rule(a: tuple, b: tuple, exact: bool) -> tuple:
        kind = op
        if kind in _SWAPPED:  # a > b is b < a
            kind, a, b = _SWAPPED[kind], b, a
        if a == b:
            return const(kind in ("==", "<="))
        (ta, ka), (tb, kb) = linear(a), linear(b)
        common = {atom for atom, coef in ta.items() if coef and tb.get(atom) == coef}
        move_constant = ka != 0 and (kb != 0 or not any(tb.values()))
        if not common and not move_constant:
            return (kind, a, b)
        ta = {t: c for t, c in ta.items() if t not in common}
        tb = {t: c for t, c in tb.items() if t not in common}
        if move_constant:
            ka, kb = 0, kb - ka
        left, right = from_linear(ta, ka), from_linear(tb, kb)
        if is_const(left) and is_const(right):
            return const(apply(kind, left[1], right[1]))
        return const(kind in ("==", "<=")) if left == right else (kind, left, right)
    return rule


def _not(a: tuple, exact: bool) -> tuple:
    if a[0] == "not":
        return a[1]
    if a[0] == "<":
        return ("<=", a[2], a[1])
    if a[0] == "<=":
        return ("<", a[2], a[1])
    if a[0] in ("==", "!="):
        return ("!=" if a[0] == "==" else "==", a[1], a[2])
    if a[0] in ("&&", "||"):  # De Morgan
        return simplify(("||" if a[0] == "&&" else "&&", ("not", a[1]), ("not", a[2])), exact)
    return ("not", a)


def _logical(op: str):
    absorbing, neutral = (0, 1) if op == "&&" else (1, 0)
    dual = "||" if op == "&&" else "&&"

    def rule(a: tuple, b: tuple, exact: bool) -> tuple:
        if a == b:
            return a
        if is_const(a):
            a, b = b, a
        if is_const(b):
            if bool(b[1]) == bool(absorbing):
                return const(absorbing)
            if b[1] == neutral and (not exact or a[0] in _BOOLEAN):
                return a
        if b == ("not", a) or a == ("not", b):  # x && !x, x || !x
            return const(absorbing)
        if b[0] == dual and a in b[1:]:  # x && (x || y) is x
            return a
        if a[0] == dual and b in a[1:]:
            return b
        return (op, a, b)
    return rule


_RULES = {"*": _product, "/": _divide, "%": _modulo, "min": _extremum("min"), "max": _extremum("max"),
          "not": _not, "&&": _logical("&&"), "||": _logical("||"),
          **{op: _compare(op) for op in COMPARISONS}}


# --- check ------------------------------------------------------------------------------------

def _affine(node: tuple) -> Optional[tuple]:
    """(terms, constant) when node is affine in its variables (symbols, calls, divisions and
    moduli), else None."""
    kind = node[0]
    if kind in _VARIABLES:
        return {node: 1}, 0
    if kind == "c":
        return {}, node[1]
    if kind in ("+", "-", "neg", "pos", "*"):
        terms, k = linear(node)
        if all(atom[0] in _VARIABLES for atom in terms):
            return terms, k
    return None


def _node_of(cond) -> tuple:
    if isinstance(cond, SymbolicExpr):
        return cond.node
    if isinstance(cond, (int, SymbolicScalar)):  # bool included
        return const(int(cond))
    raise _core.DTypeError(f"SymbolicScalar.check: conditions must be symbolic scalars or ints, "
                           f"got {type(cond).__name__}")


def _conjuncts(node: tuple, out: list) -> None:
    if node[0] == "&&":
        _conjuncts(node[1], out)
        _conjuncts(node[2], out)
    else:
        out.append(node)


def _gcd(values) -> int:
    g = 0
    for v in values:
        g = math.gcd(g, v)
    return g


class _Conjunction:
    """The state of one check(): substitutions found so far and the rows left."""

    def __init__(self, conjuncts: list):
        self.conjuncts = conjuncts
        self.subst: dict = {}  # variable -> (terms, constant), always fully substituted
        self.rows: list = []  # (terms, constant, op): terms + constant op 0
        self.opaque: list = []  # conditions with non-affine parts
        for node in conjuncts:
            self._add(node)

    def _add(self, node: tuple) -> None:
        if node[0] in COMPARISONS:
            left, right = _affine(node[1]), _affine(node[2])
            if left is not None and right is not None:
                terms = dict(left[0])
                for atom, coef in right[0].items():
                    terms[atom] = terms.get(atom, 0) - coef
                self.rows.append((terms, left[1] - right[1], node[0]))
                return
        elif node[0] == "not" and _affine(node[1]) is not None:  # !x is x == 0
            self.rows.append((*_affine(node[1]), "=="))
            return
        elif _affine(node) is not None:  # a bare value is x != 0
            self.rows.append((*_affine(node), "!="))
            return
        self.opaque.append(node)

    def resolve(self, terms: dict, k: int) -> tuple:
        out: dict = {}
        for atom, coef in terms.items():
            sub_terms, sub_k = self.subst.get(atom, ({atom: 1}, 0))
            for sub_atom, sub_coef in sub_terms.items():
                out[sub_atom] = out.get(sub_atom, 0) + coef * sub_coef
            k += coef * sub_k
        return {atom: coef for atom, coef in out.items() if coef}, k

    def _solve_for(self, var: tuple, terms: dict, k: int) -> None:
        coef = terms[var]  # +-1: var = -(rest + k) * coef
        value = ({atom: -c * coef for atom, c in terms.items() if atom != var}, -k * coef)
        self.subst[var] = value
        for other, (o_terms, o_k) in list(self.subst.items()):
            if var in o_terms:
                self.subst[other] = self.resolve(o_terms, o_k)

    def solve_equalities(self) -> Optional[list]:
        """Substitutes equalities with a +-1 coefficient to a fixed point; None on a contradiction,
        else the equalities left (no such coefficient)."""
        pending = [(t, k) for t, k, op in self.rows if op == "=="]
        while True:
            progress, left = False, []
            for terms, k in pending:
                terms, k = self.resolve(terms, k)
                if not terms:
                    if k != 0:
                        return None
                    continue
                g = _gcd(terms.values())
                if k % g:
                    return None  # no integer solution
                terms, k = {atom: coef // g for atom, coef in terms.items()}, k // g
                units = [atom for atom, coef in terms.items() if abs(coef) == 1]
                if not units:
                    left.append((terms, k))
                    continue
                units.sort(key=lambda atom: atom[0] not in ("s", "call"))  # symbols before divisions
                self._solve_for(units[0], terms, k)
                progress = True
            pending = left
            if not progress:
                return pending

    def ground(self) -> dict:
        """Symbols the substitutions pin to a constant."""
        return {var[1]: k for var, (terms, k) in self.subst.items() if var[0] == "s" and not terms}

    def bounds_contradict(self, left_equalities: list, ground: dict) -> bool:
        low: dict = {}
        high: dict = {}
        unequal = []
        rows = [(t, k, op) for t, k, op in self.rows if op != "=="] + [(t, k, "==") for t, k in left_equalities]
        for terms, k, op in rows:
            terms, k = self.resolve(terms, k)
            for atom in [a for a in terms if a[0] in ("/", "%")]:  # divisions whose operands are pinned
                value = evaluate(atom, ground)
                if value is not None:
                    k += terms.pop(atom) * value
            if not terms:
                if not apply(op, k, 0):
                    return True
                continue
            key, op, bound = _normalized(terms, k, op)
            if op == "!=":
                unequal.append((key, bound))
                continue
            if op in (">=", "=="):
                low[key] = max(low.get(key, bound), bound)
            if op in ("<=", "=="):
                high[key] = min(high.get(key, bound), bound)
            if key in low and key in high and low[key] > high[key]:
                return True
        return any(low.get(key) == high.get(key) == bound for key, bound in unequal)


def _normalized(terms: dict, k: int, op: str) -> tuple:
    """terms + k op 0 as an integer bound on the gcd-reduced, sign-fixed terms: (key, op, bound)
    with op one of >=, <=, ==, != (strict bounds become inclusive before dividing by the gcd)."""
    bound = -k
    if op == "<":
        op, bound = "<=", bound - 1
    elif op == ">":
        op, bound = ">=", bound + 1
    items = sorted(terms.items(), key=lambda item: render(item[0]))
    if items[0][1] < 0:
        items = [(atom, -coef) for atom, coef in items]
        bound = -bound
        op = {"<=": ">=", ">=": "<="}.get(op, op)
    g = _gcd(coef for _, coef in items)
    key = tuple((render(atom), coef // g) for atom, coef in items)
    if op == "<=":
        return key, op, bound // g
    if op == ">=":
        return key, op, -(-bound // g)
    return key, op, Fraction(bound, g)


def _inconsistent(rows: list) -> bool:
    """Gaussian elimination over the rationals: do the equalities (terms + k == 0) contradict?"""
    variables = sorted({atom for terms, _ in rows for atom in terms}, key=render)
    matrix = [[Fraction(terms.get(v, 0)) for v in variables] + [Fraction(-k)] for terms, k in rows]
    pivot_row = 0
    for col in range(len(variables)):
        pivot = next((r for r in range(pivot_row, len(matrix)) if matrix[r][col] != 0), None)
        if pivot is None:
            continue
        matrix[pivot_row], matrix[pivot] = matrix[pivot], matrix[pivot_row]
        for r in range(len(matrix)):
            if r != pivot_row and matrix[r][col] != 0:
                factor = matrix[r][col] / matrix[pivot_row][col]
                matrix[r] = [x - factor * y for x, y in zip(matrix[r], matrix[pivot_row])]
        pivot_row += 1
    return any(all(x == 0 for x in row[:-1]) and row[-1] != 0 for row in matrix)


def _affine_difference_is_zero(node: tuple) -> bool:
    if node[0] not in ("==", "<=", ">="):
        return False
    left, right = _affine(node[1]), _affine(node[2])
    if left is None or right is None:
        return False
    terms = dict(left[0])
    for atom, coef in right[0].items():
        terms[atom] = terms.get(atom, 0) - coef
    return left[1] == right[1] and not any(terms.values())


def check(conds) -> SatStatus:
    """`SymbolicScalar.check([c1, c2, ...])`: SAT if every condition provably holds, UNSAT if they
    contradict, UNKNOWN otherwise (see the module doc)."""
    conjuncts: list = []
    for cond in conds:
        _conjuncts(simplify(_node_of(cond), exact=True), conjuncts)
    for node in conjuncts:
        if is_const(node) and node[1] == 0:
            return SatStatus.UNSAT
    conjuncts = [node for node in conjuncts if not is_const(node)]
    state = _Conjunction(conjuncts)
    left = state.solve_equalities()
    if left is None or _inconsistent(left):
        return SatStatus.UNSAT
    ground = state.ground()
    values = [evaluate(node, ground) for node in conjuncts]
    if any(v == 0 for v in values):
        return SatStatus.UNSAT
    if state.bounds_contradict(left, ground):
        return SatStatus.UNSAT
    if all(v or _affine_difference_is_zero(node) for v, node in zip(values, conjuncts)):
        return SatStatus.SAT
    return SatStatus.UNKNOWN
