"""docs/ stays true: generated tables match the live platform table, every op has a page,
the examples print what the pages say, and relative links resolve."""
import doctest
import re
from pathlib import Path

import pytest

import ptocpu
from ptocpu.tools import doctables as _doctables

DOCS = Path(__file__).resolve().parent.parent.parent / "docs"
PAGES = sorted(DOCS.rglob("*.md"))


def _name(page: Path) -> str:
    return str(page.relative_to(DOCS))


def test_docs_folder_found():
    assert (DOCS / "README.md").is_file(), DOCS


@pytest.mark.parametrize("page", PAGES, ids=_name)
def test_generated_regions_are_current(page):
    text = page.read_text(encoding="utf-8")
    for spec, body in _doctables.regions(text):
        assert body == _doctables.generate(spec), (
            f"{_name(page)}: region '{spec}' differs from the platform table; run python -m ptocpu.tools.doctables")


def test_every_op_has_a_page_with_its_generated_table():
    # The op table names each op's page; a page under docs/ops/ carries the op's platforms table.
    missing = []
    limits = {row["name"]: row["limits"] for row in ptocpu.op_table()}
    for row in ptocpu.op_table():
        page = DOCS.parent / row["doc_page"]
        assert page.is_file(), f"{row['name']}: doc page {row['doc_page']} does not exist"
        if page.parent.name != "ops":
            continue
        specs = [spec.split() for spec, _ in _doctables.regions(page.read_text(encoding="utf-8"))]
        tabled = [words[1] for words in specs if words[0] == "platforms"]
        # ops sharing a page (scatter_ / scatter) share a table when their limits are the same
        if not any(limits[name] == row["limits"] for name in tabled):
            missing.append(row["name"])
    assert not missing, f"ops without a '<!-- begin generated: platforms OP -->' table on their page: {missing}"


def test_each_docstring_is_the_region_of_its_page():
    # The docstring is written once, in the op's page (docs/CONTRIBUTING.md); help() shows that text.
    for row in ptocpu.op_table():
        text = (DOCS.parent / row["doc_page"]).read_text(encoding="utf-8")
        region = f"<!-- begin docstring {row['name']} -->\n```text\n{row['doc']}\n```\n<!-- end docstring -->\n"
        assert text.count(f"<!-- begin docstring {row['name']} -->") == 1, row["name"]
        assert region in text, row["name"]
        assert row["doc"].strip(), row["name"]


def test_an_edited_cell_is_detected():
    page = (DOCS / "ops" / "index_select.md").read_text(encoding="utf-8")
    spec, body = _doctables.regions(page)[0]
    edited = page.replace(body, body.replace("1–4", "1–5", 1))
    assert edited != page
    assert _doctables.render(edited) == page


@pytest.mark.parametrize("text, error", [
    ("<!-- begin generated: nonsense -->\n<!-- end generated -->\n", "unknown generated region"),
    ("<!-- begin generated: platforms no_such_op -->\n<!-- end generated -->\n", "unknown op"),
    ("<!-- begin generated: platforms index_select +no_field -->\n<!-- end generated -->\n", "unknown platform field"),
    ("<!-- begin generated: dtypes -->\n| a |\n", "begin markers"),
])
def test_bad_markers_are_errors(text, error):
    with pytest.raises(ValueError, match=error):
        _doctables.render(text)


def test_check_reports_a_stale_region(tmp_path, capsys):
    (tmp_path / "page.md").write_text("<!-- begin generated: dtypes -->\nold\n<!-- end generated -->\n")
    assert _doctables.main(["--docs", str(tmp_path), "--check"]) == 1
    assert "page.md: dtypes" in capsys.readouterr().err
    assert _doctables.main(["--docs", str(tmp_path)]) == 0
    assert _doctables.main(["--docs", str(tmp_path), "--check"]) == 0


def _python_blocks(text: str):
    """(line number, code) of every ```python block that holds a >>> example."""
    for m in re.finditer(r"^```python\n(.*?)^```$", text, re.MULTILINE | re.DOTALL):
        if ">>>" in m[1]:
            yield text.count("\n", 0, m.start()) + 2, m[1]


@pytest.mark.parametrize("page", [p for p in PAGES if any(_python_blocks(p.read_text(encoding="utf-8")))], ids=_name)
def test_examples_print_what_the_page_says(page):
    text = page.read_text(encoding="utf-8")
    globs = {}
    runner = doctest.DocTestRunner(optionflags=doctest.NORMALIZE_WHITESPACE)
    for line, code in _python_blocks(text):
        test = doctest.DocTestParser().get_doctest(code, globs, f"{_name(page)}:{line}", str(page), line)
        runner.run(test, clear_globs=False)
        globs = test.globs  # DocTest copies its globals; later blocks see this block's names
    assert runner.failures == 0, f"{runner.failures} example(s) in {_name(page)} print something else (see above)"


def _anchors(page: Path) -> set[str]:
    """GitHub's heading anchors: lower case, punctuation dropped, spaces to hyphens."""
    out = set()
    for line in page.read_text(encoding="utf-8").splitlines():
        if line.startswith("#"):
            title = line.lstrip("#").strip().lower()
            out.add(re.sub(r"[^\w\- ]", "", title).replace(" ", "-"))
    return out


@pytest.mark.parametrize("page", PAGES, ids=_name)
def test_relative_links_resolve(page):
    text = re.sub(r"^```.*?^```$", "", page.read_text(encoding="utf-8"), flags=re.MULTILINE | re.DOTALL)
    for target in re.findall(r"\]\(([^)\s]+)\)", text):
        if re.match(r"[a-z]+://", target):
            continue
        path, _, anchor = target.partition("#")
        dest = (page.parent / path).resolve() if path else page
        assert dest.exists(), f"{_name(page)}: link {target} -> {dest} does not exist"
        if anchor and dest.suffix == ".md":
            assert anchor in _anchors(dest), f"{_name(page)}: link {target}: no heading with anchor #{anchor}"


def test_contributing_names_real_files_for_every_op():
    """docs/CONTRIBUTING.md's op index: every path it names exists, and every op of the table has a row."""
    text = (DOCS / "CONTRIBUTING.md").read_text()
    table = text.split("## Where each op lives", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in table.splitlines() if line.startswith("| ") and not line.startswith("| op ")]
    root = DOCS.parent
    paths = [p for line in rows for p in re.findall(r"`([\w./-]+\.(?:cpp|h|py|md))`", line)]
    missing = [p for p in paths if not (root / p).exists()]
    assert not missing, missing
    listed = {line.split("|")[1].strip().strip("`") for line in rows if not line.startswith("| ---")}
    assert listed == {row["name"] for row in ptocpu.op_table()}
