"""Tables in docs/ generated from the live platform and dtype tables.

A page marks a region with

    <!-- begin generated: KIND [ARGS] -->
    ...
    <!-- end generated -->

and this module rewrites what lies between the two marker lines. Kinds:

    platforms OP [+FIELD ...]   OP's limits per platform (offered, rank, dtypes and any other
                                key the binding reports for OP); +FIELD adds a platform-wide
                                column, e.g. +ub_bytes or +scatter_scalar_must_be_finite
    platform-summary            one row per platform: names, aliases and platform-wide limits
    platform-ops                a `platforms OP` table for every op the binding reports
    dtypes                      every dtype with its size and numpy / ml_dtypes dtype
    bench-cases                 the cases `ptocpu bench` runs (ptocpu.tools.bench.cases.CASES)
    op-index                    every op of the op table: its entry's file, its forms, its page
    op-pages                    each docs/ops page with the ops it documents
    signature OP                OP's Python forms as the binding gives them (function, method, operators)

Everything comes from the op table (`ptocpu.op_table()`, `ptocpu.platform_table()`) and the
dtype enum, so a new op only needs a `platforms OP` marker in its page.

    python -m ptocpu.tools.doctables [--docs DIR]          rewrite the regions
    python -m ptocpu.tools.doctables [--docs DIR] --check  exit 1 when a region is out of date
"""
from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path
from typing import Callable

import ptocpu

BEGIN = "<!-- begin generated: "
END = "<!-- end generated -->"
_REGION = re.compile(r"^<!-- begin generated: (?P<spec>[^\n]*?) -->\n(?P<body>.*?)^<!-- end generated -->$",
                     re.MULTILINE | re.DOTALL)

# Op-table keys with a column of their own, in this order; any other key gets a column after them.
_OP_COLUMNS = {"offered": "offered", "rank": "input rank", "dtypes": "input dtypes"}
# How platform-wide fields read in a table.
_FIELD_TITLES = {"ub_bytes": "UB bytes (tile checks)", "max_extent": "largest dim / numel",
                 "empty_inputs_allowed": "empty inputs", "scatter_scalar_must_be_finite": "scalar src must be finite",
                 "l0a_bytes": "L0A bytes", "l0b_bytes": "L0B bytes", "l0c_bytes": "L0C bytes", "l1_bytes": "L1 bytes",
                 "bias_table_bytes": "bias table bytes", "fixpipe_bytes": "fixpipe bytes"}
# Buffer sizes where 0 means the platform sets no limit.
_UNLIMITED_WHEN_ZERO = ("ub_bytes", "l0a_bytes", "l0b_bytes", "l0c_bytes", "l1_bytes", "bias_table_bytes",
                        "fixpipe_bytes")


def _storage_formats() -> list[str]:
    """The narrow storage formats (docs/dtypes.md#narrow-storage-formats)."""
    return [row["dtype"].name for row in ptocpu._core.dtype_table() if row["storage_format"]]


def _dtype_cell(text: str) -> str:
    """A dtype list as "all", "all except ..." (a few of the dtypes ops compute with missing), and
    the storage formats it has, or the list itself. "all" means the dtypes ops compute with."""
    given = [d.strip() for d in text.split(",") if d.strip()]
    storage = [d for d in given if d in _storage_formats()]
    computing = [d for d in ptocpu.DType.__members__ if d not in _storage_formats()]
    missing = [d for d in computing if d not in given]
    extra = "" if not storage else (", every storage format" if len(storage) == len(_storage_formats())
                                    else ", " + ", ".join(storage))
    if not missing:
        return "all" + extra
    if len(missing) <= 4:
        return "all except " + ", ".join(missing) + extra
    return ", ".join(given)


def _value_cell(key: str, value) -> str:
    if key in _UNLIMITED_WHEN_ZERO and value == 0:
        return "no limit"
    if key == "max_extent" and value >= 2**62:
        return "int64"
    if key == "empty_inputs_allowed":
        return "allowed" if value else "rejected"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, (tuple, list)) and len(value) == 2 and all(isinstance(v, int) for v in value):
        return f"{value[0]}–{value[1]}" if value[0] != value[1] else str(value[0])
    if isinstance(value, (tuple, list)):
        return ", ".join(str(v) for v in value) or "—"
    return str(value) if value != "" else "—"


def _title(key: str) -> str:
    return _OP_COLUMNS.get(key) or _FIELD_TITLES.get(key) or key.replace("_", " ")


def _table(header: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + " --- |" * len(header)]
    lines += ["| " + " | ".join(cell.replace("|", "\\|") for cell in row) + " |" for row in rows]
    return "\n".join(lines) + "\n"


def _platform_label(p: dict) -> str:
    return f"{p['name']} ({p['arch']})"


def platforms(op: str, *fields: str) -> str:
    """OP's limits on every platform; `fields` ("+ub_bytes", ...) add platform-wide columns."""
    table = ptocpu.platform_table()
    known = list(table[0]["ops"])
    if op not in known:
        raise ValueError(f"platforms: unknown op {op!r}; the platform table has {', '.join(known)}")
    extra = [f.removeprefix("+") for f in fields]
    for f in extra:
        if not f or f == "ops" or f not in table[0]:
            raise ValueError(f"platforms {op}: unknown platform field {f!r}; "
                             f"fields: {', '.join(k for k in table[0] if k != 'ops')}")
    keys = [k for k in _OP_COLUMNS if k in table[0]["ops"][op]]
    keys += [k for k in table[0]["ops"][op] if k not in _OP_COLUMNS]
    rows = []
    for p in table:
        limits = p["ops"][op]
        row = [_platform_label(p)]
        for k in keys:
            if k == "offered":
                row.append("yes" if limits[k] else "no: UnsupportedError")
            elif not limits["offered"]:
                row.append("—")
            elif k == "dtypes":
                row.append(_dtype_cell(limits[k]))
            else:
                row.append(_value_cell(k, limits[k]))
        row += [_value_cell(f, p[f]) for f in extra]
        rows.append(row)
    return _table(["platform"] + [_title(k) for k in keys] + [_title(f) for f in extra], rows)


def platform_summary() -> str:
    """One row per platform: its names and every platform-wide field."""
    table = ptocpu.platform_table()
    keys = [k for k in table[0] if k not in ("name", "arch", "aliases", "ops")]
    rows = [[f"`{p['name']}`", p["arch"], ", ".join(f"`{a}`" for a in p["aliases"])] +
            [_value_cell(k, p[k]) for k in keys] for p in table]
    return _table(["platform", "arch", "aliases"] + [_title(k) for k in keys], rows)


def platform_ops() -> str:
    """A platforms table for every op of the platform table, each under its own heading."""
    ops = list(ptocpu.platform_table()[0]["ops"])
    return "\n".join(f"#### `{op}`\n\n{platforms(op)}" for op in ops)


def dtypes() -> str:
    """Every dtype: its name, size and the numpy / ml_dtypes dtype it converts to."""
    rows = []
    for name, dt in ptocpu.DType.__members__.items():
        rows.append([f"`{name}`", str(ptocpu.itemsize(dt)), f"`{ptocpu.numpy_dtype(dt)}`"])
    return _table(["dtype", "bytes", "numpy / ml_dtypes"], rows)


def bench_cases() -> str:
    """The benchmark cases: id, op, call, dtype and how the result is compared with the peers."""
    from .bench.cases import CASES
    rows = [[c.id, f"`{c.op}`", c.call, c.dtype, "bit-exact" if c.tol is None else "tolerance"] for c in CASES]
    return _table(["case", "op", "call", "dtype", "check against peers"], rows)


def op_index() -> str:
    """One row per op of the op table: where its entry is, how Python reaches it, its page."""
    rows = []
    for row in ptocpu.op_table():
        forms = [f"`ptocpu.{row['name']}`"] if row["function"] else []
        forms += [f"`Tensor.{row['name']}`"] if row["method"] else []
        forms += [f"`{name}`" for name, _ in row["dunders"]]
        rows.append([f"`{row['name']}`", f"`{row['defined_in']}`", ", ".join(forms) or "—", f"`{row['doc_page']}`"])
    return _table(["op", "entry and checks", "Python", "page"], rows)


def op_pages() -> str:
    """The operator pages (docs/README.md): each page with the ops it documents, in table order."""
    pages: dict[str, list[str]] = {}
    for row in ptocpu.op_table():
        if row["doc_page"].startswith("docs/ops/"):
            pages.setdefault(row["doc_page"], []).append(f"`{row['name']}`")
    rows = [[f"[{page.removeprefix('docs/')}]({page.removeprefix('docs/')})", ", ".join(ops)]
            for page, ops in pages.items()]
    return _table(["page", "ops"], rows)


def signature(op: str) -> str:
    """The op's Python forms: the function's signature, its Tensor method and operators."""
    rows = {row["name"]: row for row in ptocpu.op_table()}
    if op not in rows:
        raise ValueError(f"signature: unknown op {op!r}")
    row = rows[op]
    lines = [row["signature"].removeprefix("def ").replace("def ", "")] if row["function"] else []
    if row["method"]:
        params = ", ".join(p["name"] + (f"={p['default']}" if p["default"] else "") for p in row["params"][1:])
        lines.append(f"Tensor.{op}({params})")
    lines += [f"Tensor.{name}: {recipe or op + '(self, ...)'}" for name, recipe in row["dunders"]]
    return "```\n" + "\n".join(lines) + "\n```\n"


KINDS: dict[str, Callable[..., str]] = {
    "platforms": platforms,
    "platform-summary": platform_summary,
    "platform-ops": platform_ops,
    "dtypes": dtypes,
    "bench-cases": bench_cases,
    "op-index": op_index,
    "op-pages": op_pages,
    "signature": signature,
}


def generate(spec: str) -> str:
    """The text of the region whose begin marker reads `spec` (e.g. "platforms index_select")."""
    kind, *args = spec.split()
    if kind not in KINDS:
        raise ValueError(f"unknown generated region {spec!r}; kinds: {', '.join(KINDS)}")
    try:
        return KINDS[kind](*args)
    except TypeError as e:
        raise ValueError(f"generated region {spec!r}: wrong arguments ({e})") from None


def regions(text: str) -> list[tuple[str, str]]:
    """(spec, body) of every generated region of a page. A begin marker without its end is an error."""
    found = [(m["spec"], m["body"]) for m in _REGION.finditer(text)]
    begins = sum(1 for line in text.splitlines() if line.startswith(BEGIN))
    if begins != len(found):
        raise ValueError(f"{begins} begin markers but {len(found)} complete regions (each needs its own {END!r} line)")
    return found


def render(text: str) -> str:
    """The page with every generated region replaced by what the generator produces now."""
    regions(text)  # validates the markers
    return _REGION.sub(lambda m: f"{BEGIN}{m['spec']} -->\n{generate(m['spec'])}{END}", text)


def pages(docs: Path) -> list[Path]:
    return sorted(docs.rglob("*.md"))


def stale_regions(docs: Path) -> list[str]:
    """"page: region" for every region that differs from what the generator produces now."""
    out = []
    for page in pages(docs):
        text = page.read_text(encoding="utf-8")
        for spec, body in regions(text):
            if body != generate(spec):
                out.append(f"{page.relative_to(docs)}: {spec}")
    return out


def default_docs() -> Path:
    """docs/ of the source tree this module lives in (python/ptocpu/ -> ../../docs), else ./docs."""
    here = Path(__file__).resolve().parents[2] / "docs"
    return here if here.is_dir() else Path.cwd() / "docs"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m ptocpu.tools.doctables", description=__doc__.split("\n")[0])
    parser.add_argument("--docs", type=Path, default=None, help="the docs folder (default: the source tree's docs/)")
    parser.add_argument("--check", action="store_true", help="only report regions that are out of date (exit 1)")
    args = parser.parse_args(argv)
    docs = args.docs or default_docs()
    if not docs.is_dir():
        print(f"no docs folder at {docs}", file=sys.stderr)
        return 2
    if args.check:
        stale = stale_regions(docs)
        for s in stale:
            print(f"out of date: {s}", file=sys.stderr)
        if stale:
            print("run: python -m ptocpu.tools.doctables", file=sys.stderr)
            return 1
        count = sum(len(regions(p.read_text(encoding="utf-8"))) for p in pages(docs))
        print(f"{count} generated regions up to date")
        return 0
    for page in pages(docs):
        text = page.read_text(encoding="utf-8")
        new = render(text)
        if new != text:
            page.write_text(new, encoding="utf-8")
            print(f"rewrote {page}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
