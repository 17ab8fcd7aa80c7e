"""Symbolic scalars (python/ptocpu/lang/symbolic.py, symbolic_check.py): known scalars are ints
with PyPTO's C++ arithmetic, named unknowns are expressions that print, simplify and take part in
SymbolicScalar.check as PyPTO's do.

Each test names the upstream hicann/pypto file whose behaviour it checks; the expressions here
are our own.
"""
from __future__ import annotations

import itertools

import pytest

import ptocpu as pypto
from ptocpu import SatStatus, SymbolicScalar
from ptocpu.lang.symbolic import SymbolicExpr


def syms(names: str):
    return [pypto.symbolic_scalar(n) for n in names.split()]


def check(conds):
    return SymbolicScalar.check(conds)


# --- kinds, values and printing ----------------------------------------------------------------

def test_known_and_unknown_scalars_have_pypto_kinds():
    # python/tests/ut/interface/test_symbolic_scalar.py (test_symbolic_scalar_prop, init tests)
    seven, named, n = pypto.symbolic_scalar(7), pypto.symbolic_scalar("k", 4), pypto.symbolic_scalar("n")
    assert (seven.is_immediate(), seven.is_symbol(), seven.is_concrete(), seven.concrete()) == (True, False, True, 7)
    assert (named.is_symbol(), named.is_concrete(), named.concrete(), named.name) == (True, True, 4, "k")
    assert (n.is_symbol(), n.is_expression(), n.is_concrete()) == (True, False, False)
    assert pypto.symbolic_scalar(seven) is seven and pypto.symbolic_scalar(n) is n
    for value in (seven, n, n + 1, seven < 2, n < 2):
        assert isinstance(value, pypto.SymbolicScalar) and isinstance(value, pypto.symbolic_scalar)
    assert isinstance(seven, int) and not isinstance(n, int)  # the core reads known scalars as ints
    assert (n < 2).is_expression() and (seven < 2).is_immediate() and (named + 1).is_expression()
    assert str(seven) == "7" and int(seven) == 7 and repr(seven) == "SymbolicScalar(7)"


def test_unknowns_print_as_pypto_prints_them():
    # test_symbolic_scalar.py (test_symbolic_scalar_issue36, test_symbolic_scalar_logical_ops)
    b, y = syms("b y")
    assert str((b >= 2) * (b < 8)) == "((b>=2)*(b<8))"
    assert str(-y) == "(-y)" and str(~y) == "(!y)" and str(+y) == "(+y)"
    assert str(y / 3 + y % 4) == "((y/3)+(y%4))" and str(y // 3) == "(y/3)"
    assert str(y.min(5)) == "RUNTIME_Min(y, 5)" and str(pypto.max(y, b)) == "RUNTIME_Max(y, b)"
    assert str(y & 20) == "(y&&20)" and str(y | b) == "(y||b)" and str(3 - y) == "(3-y)"
    # a known operand that decides and / or folds at once
    assert str(0 & y) == "0" and str(y | pypto.symbolic_scalar(10)) == "1"


def test_known_arithmetic_is_cpp_integer_arithmetic():
    # test_symbolic_scalar.py (test_binary_ops, test_symbolic_scalar_binop_with_int,
    # test_symbolic_scalar_uniop): / divides integers, comparisons give 0 / 1, & | ~ are logical
    a = pypto.symbolic_scalar(-7)
    assert a / 2 == -3 and a // 2 == -3 and a % 2 == -1 and 7 / pypto.symbolic_scalar(2) == 3  # truncation
    assert (a < 0).concrete() == 1 and (a == -7).concrete() == 1 and (0 > a).concrete() == 1
    assert (~a).concrete() == 0 and (~pypto.symbolic_scalar(0)).concrete() == 1
    assert (a & 5).concrete() == 1 and (a & 0).concrete() == 0 and (0 | a).concrete() == 1
    assert all(isinstance(v, pypto.SymbolicScalar) for v in (a + 1, 1 - a, a * 2, a / 2, a % 3, -a, a.max(0)))
    assert a.max(0) == 0 and pypto.min(a, 3) == -7
    assert a + 0.5 == -6.5 and isinstance(a + 0.5, float)  # a float stays Python's
    assert {a: "x"}[-7] == "x"  # hashes as its int
    with pytest.raises(pypto.ArgumentError, match="division by zero"):
        a / 0
    with pytest.raises(pypto.ArgumentError, match="modulo by zero"):
        a % pypto.symbolic_scalar(0)


@pytest.mark.parametrize("op", ["+", "-", "*", "==", "!=", "<", "<=", ">", ">="])
def test_known_operands_of_every_kind_give_python_values_and_pypto_kinds(op):
    # The short way for known operands (loop values, valid-shape dims, ints) against Python's ints:
    # the value as Python computes it (comparisons 0 / 1), a SymbolicScalar, and an expression as
    # soon as a named scalar takes part.
    import operator

    from ptocpu.lang.symbolic import KnownDim
    fn = {"+": operator.add, "-": operator.sub, "*": operator.mul, "==": operator.eq, "!=": operator.ne,
          "<": operator.lt, "<=": operator.le, ">": operator.gt, ">=": operator.ge}[op]
    makers = {"int": int, "immediate": pypto.symbolic_scalar, "named": lambda v: pypto.symbolic_scalar("k", v),
              "dim": KnownDim, "loop": lambda v: next(iter(pypto.loop(v, v + 1)))}
    for (ka, make_a), (kb, make_b) in itertools.product(makers.items(), repeat=2):
        if ka == "int" and kb == "int":
            continue
        for a, b in itertools.product((-3, 0, 5), repeat=2):
            result = fn(make_a(a), make_b(b))
            assert type(result) is SymbolicScalar and int(result) == int(fn(a, b)), (ka, kb, a, b)
            assert result.is_expression() == ("named" in (ka, kb)), (ka, kb)


def test_an_unknown_has_no_value_on_the_cpu():
    # test_symbolic_scalar.py: an unknown is not concrete; where a value is needed PyPTO raises
    (n,) = syms("n")
    for use in (bool, int, range, lambda v: v.concrete(), lambda v: pypto.cond(v)):
        with pytest.raises(pypto.ArgumentError, match=r"symbolic scalar n has no value on the CPU"):
            use(n)
    with pytest.raises(pypto.ArgumentError, match=r"\(n\+1\) has no value"):
        pypto.ceildiv(n + 1, 2)
    with pytest.raises(pypto.DTypeError):
        pypto.symbolic_scalar("a", "b")
    with pytest.raises(pypto.DTypeError):
        pypto.symbolic_scalar(2.5)


def test_symint_is_the_annotation_and_the_module_spells_it():
    # python/tests/st/operation/vector/test_clip.py imports SymInt from pypto.symbolic_scalar
    from ptocpu.lang import symbolic
    assert pypto.SymInt == symbolic.SymInt and symbolic.SatStatus is SatStatus
    assert str(SatStatus.UNSAT) == "SatStatus.UNSAT"


# --- simplify ---------------------------------------------------------------------------------

@pytest.mark.parametrize("build, expected", [
    # python/tests/ut/interface/test_symbolic_scalar_simplify.py: the rule each case names
    (lambda x, y, z: -(-x), "x"),                                    # neg neg
    (lambda x, y, z: -(y - z), "(z-y)"),                             # neg of a difference
    (lambda x, y, z: ~~y, "y"),                                      # not not
    (lambda x, y, z: ~(x < y), "(y<=x)"),                            # negated comparisons
    (lambda x, y, z: ~(x <= y), "(y<x)"),
    (lambda x, y, z: ~(x != y), "(x==y)"),
    (lambda x, y, z: (x + 4) + 6, "(x+10)"),                         # constants gathered, on the right
    (lambda x, y, z: 2 + (y - 9), "(y-7)"),
    (lambda x, y, z: (x + y) - x, "y"),                              # cancellation
    (lambda x, y, z: (z - x) - (z - y), "(y-x)"),
    (lambda x, y, z: (y + 2) - z, "((y-z)+2)"),
    (lambda x, y, z: x + x + x, "(x*3)"),                            # like terms
    (lambda x, y, z: 4 * (y * 5), "(y*20)"),
    (lambda x, y, z: y * x + y * z, "((x+z)*y)"),                    # a common factor
    (lambda x, y, z: y.max(x) * y.min(x), "(y*x)"),
    (lambda x, y, z: (z * 8) / 4, "(z*2)"),                          # exact division
    (lambda x, y, z: (x / 3) / 5, "(x/15)"),
    (lambda x, y, z: (y * 9) % 3, "0"),
    (lambda x, y, z: (y + 9) % 3, "(y%3)"),                          # PyPTO: addends 3 divides drop
    (lambda x, y, z: (x + z).max(y + z), "(z+RUNTIME_Max(x, y))"),    # shared terms
    (lambda x, y, z: (y + 3).min(y + 8), "(y+3)"),
    (lambda x, y, z: y.min(x.max(y)), "y"),                          # absorption
    (lambda x, y, z: pypto.max(7, x), "RUNTIME_Max(x, 7)"),
    (lambda x, y, z: (x - z <= y - z), "(x<=y)"),                    # comparisons cancel
    (lambda x, y, z: (y >= y), "1"),
    (lambda x, y, z: (y > y), "0"),
    (lambda x, y, z: (z + 2 < 9), "(z<7)"),
    (lambda x, y, z: y & (y | z), "y"),                              # logic
    (lambda x, y, z: z | (z & x), "z"),
    (lambda x, y, z: (~x) & x, "0"),
    (lambda x, y, z: x | ~x, "1"),
    (lambda x, y, z: y & 1, "y"),                                    # PyPTO: x && 1 is x
    (lambda x, y, z: y | 0, "y"),
    (lambda x, y, z: ~(y | z), "((!y)&&(!z))"),                      # De Morgan
])
def test_simplify(build, expected):
    x, y, z = syms("x y z")
    assert str(build(x, y, z).simplify()) == expected


def test_simplify_collapses_a_clamp_of_a_clamp_only_when_the_inner_bounds_cannot_bite():
    # test_symbolic_scalar_simplify.py (test_clamp_composition_*)
    a, b = syms("a b")
    inner = pypto.min(pypto.max(a + b, 0), 100)
    collapsed = pypto.min(pypto.max(inner - 10, 0), 20).simplify()
    assert str(collapsed) == str(pypto.min(pypto.max(a + b - 10, 0), 20))
    kept = pypto.min(pypto.max(pypto.min(pypto.max(a, 0), 5) - 2, 0), 20).simplify()
    assert str(kept).count("RUNTIME_Min") == 2 and "5" in str(kept)


def test_simplify_keeps_kinds_and_gives_known_results_as_ints():
    # test_symbolic_scalar_simplify.py (test_simplify_preserves_*)
    (x,) = syms("x")
    assert x.simplify().is_symbol() and pypto.symbolic_scalar(3).simplify().is_immediate()
    zero = (x - x).simplify()
    assert isinstance(zero, int) and zero == 0 and zero.is_immediate()
    assert ((x * 2) - x).simplify().is_symbol()


def test_simplified_forms_agree_with_the_original_on_values():
    # Every rewrite but the two PyPTO makes for non-negative scalars is an identity of C++
    # integer arithmetic: compare both forms on a grid of values, negatives included.
    from ptocpu.lang.symbolic import evaluate
    x, y, z = syms("x y z")
    forms = [-(y - z), (x + 4) + 6, (z - x) - (z - y), y * x + y * z, (z * 8) / 4, (x / 3) / 5,
             (x + z).max(y + z), y.min(x.max(y)), (x - z <= y - z), ~(x < y), ~(y | z),
             pypto.min(pypto.max(pypto.min(pypto.max(x, 0), 100) - 10, 0), 20)]
    for form in forms:
        simplified = form.simplify()
        for vx, vy, vz in itertools.product((-7, -1, 0, 2, 13), repeat=3):
            values = {"x": vx, "y": vy, "z": vz}
            want = evaluate(form.node, values)
            got = evaluate(simplified.node if isinstance(simplified, SymbolicExpr) else ("c", int(simplified)),
                           values)
            assert got == want, (str(form), str(simplified), values)


# --- check ------------------------------------------------------------------------------------

def test_check_ground_and_empty_conjunctions():
    # python/tests/ut/interface/test_symbolic_scalar_solver.py (test_ground_and_empty)
    (x,) = syms("x")
    assert check([]) == SatStatus.SAT
    assert check([pypto.symbolic_scalar(4), True]) == SatStatus.SAT
    assert check([x >= 0, pypto.symbolic_scalar(9) < 1]) == SatStatus.UNSAT
    assert check([x >= 0]) == SatStatus.UNKNOWN
    assert check([3 * (x - 2) == 3 * x - 6]) == SatStatus.SAT  # affine identity
    with pytest.raises(pypto.DTypeError):
        check(["x > 0"])


@pytest.mark.parametrize("conds, verdict", [
    # test_symbolic_scalar_solver.py: equalities (unit substitution, gcd, Gaussian elimination)
    (lambda a, b, c: [a == b + 3, b == a - 2], SatStatus.UNSAT),
    (lambda a, b, c: [a == b, b == c], SatStatus.UNKNOWN),
    (lambda a, b, c: [4 * a == 10], SatStatus.UNSAT),                       # 4 does not divide 10
    (lambda a, b, c: [6 * a + 9 * b == 4], SatStatus.UNSAT),                # gcd 3
    (lambda a, b, c: [2 * a + 3 * b == 4], SatStatus.UNKNOWN),
    (lambda a, b, c: [a + 2 * b == 3, 3 * a + 6 * b == 10], SatStatus.UNSAT),
    (lambda a, b, c: [2 * a + 3 * b + 5 * c == 1, 4 * a + 6 * b + 10 * c == 3], SatStatus.UNSAT),
    (lambda a, b, c: [a == 4, b == a + 1, c == b * 2, c <= 9], SatStatus.UNSAT),
    (lambda a, b, c: [a == 4, b == a + 1, c == b * 2, c <= 10], SatStatus.SAT),
    # inequalities: bounds on gcd-reduced, sign-fixed sums; strict before dividing
    (lambda a, b, c: [a > 3, a < 4], SatStatus.UNSAT),
    (lambda a, b, c: [3 * a > 7, a <= 3], SatStatus.UNKNOWN),               # a = 3
    (lambda a, b, c: [3 * a >= 10, a <= 3], SatStatus.UNSAT),
    (lambda a, b, c: [-4 * a >= 9, a >= -2], SatStatus.UNSAT),              # a <= -3
    (lambda a, b, c: [a - b >= 5, b + 1 >= a], SatStatus.UNSAT),            # shared part a - b
    (lambda a, b, c: [c == 2, a + c >= 7, a <= 4], SatStatus.UNSAT),
    # disequalities and values pinned through substitution
    (lambda a, b, c: [a != b, a == b], SatStatus.UNSAT),
    (lambda a, b, c: [a == 9, a % 4 == 1, a / 2 == 4], SatStatus.SAT),      # C++ / and %
    (lambda a, b, c: [a == -9, a % 4 == 3], SatStatus.UNSAT),               # -9 % 4 is -1
    (lambda a, b, c: [a == 3, b == 0, a / b == 1], SatStatus.UNKNOWN),      # never divides by 0
    (lambda a, b, c: [a == 3, b == 8, pypto.max(a, b) == 3], SatStatus.UNSAT),
    # what it does not reason about never makes a false UNSAT
    (lambda a, b, c: [a * b >= 1, a * b <= 0], SatStatus.UNKNOWN),
    (lambda a, b, c: [(a > 0) | (b > 0), a <= 0, b <= 0], SatStatus.UNKNOWN),
])
def test_check(conds, verdict):
    assert check(conds(*syms("a b c"))) == verdict


def test_check_decides_unrolled_loop_paths():
    # test_symbolic_scalar_solver.py (test_find_feasible_paths): the feasible branches of an
    # unrolled loop body, with the loop end a division of an unknown
    i, start, n = syms("i start n")
    end = (n + 3) // 4
    pre = [i >= start, i + 5 * 6 <= end]
    conds = [i + 6 * k == start for k in range(5)] + [i + 6 * (k + 1) >= end for k in range(5)]
    paths = []

    def walk(level, path, choices):
        if level == len(conds):
            paths.append(choices)
            return
        for choice, cond in ((True, conds[level]), (False, ~conds[level])):
            if check(path + [cond.simplify()]) != SatStatus.UNSAT:
                walk(level + 1, path + [cond.simplify()], choices + [choice])

    walk(0, pre, [])
    # the first iteration is either the loop's start or not; only the last can reach its end
    assert len(paths) == 4
    assert all(not any(p[1:5]) and not any(p[5:9]) for p in paths)


def test_check_places_queens():
    # test_symbolic_scalar_solver.py (test_three_queens_is_unsat): pinned columns fold every
    # disequality; no placement of 3 queens survives, the 4-queens solution does.
    def attacks(cols):
        return [c for i, j in itertools.combinations(range(len(cols)), 2)
                for c in (cols[i] != cols[j], cols[i] - (j - i) != cols[j], cols[i] + (j - i) != cols[j])]

    three = syms("q0 q1 q2")
    assert all(check([q == v for q, v in zip(three, place)] + attacks(three)) == SatStatus.UNSAT
               for place in itertools.product(range(3), repeat=3))
    four = syms("r0 r1 r2 r3")
    assert check([q == v for q, v in zip(four, (2, 0, 3, 1))] + attacks(four)) == SatStatus.SAT
