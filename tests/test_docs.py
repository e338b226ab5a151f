"""Docs that cannot drift: every ```python block of README.md and docs/ runs as written, README's
links land on files and headings of the repository, every module of both packages is named on
the architecture page, and a figure quoted from a measurement is rendered from the file that
measured it (``docs/figures.py``) wherever it is quoted.

A block that must not run says so, and why, on the line before it: ``<!-- no-run: reason -->``.
"""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
import unicodedata
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
FENCE = re.compile(r"^(\s*)```+\s*([\w+-]*)")
NO_RUN = re.compile(r"^<!--\s*no-run:\s*(?P<reason>.*?)\s*-->$")
BLOCK_TIMEOUT_S = 300  # blocks take seconds (the first may compile the kernels): a bound for hangs


@dataclass(frozen=True)
class Block:
    page: Path
    line: int  # of the opening fence, 1-based
    language: str
    code: str
    no_run: str | None  # the reason given, when the block is marked not to run

    @property
    def where(self) -> str:
        return f"{self.page.relative_to(ROOT)}:{self.line}"


def fenced_blocks(page: Path) -> list[Block]:
    """The fenced code blocks of a page, with the line each opens on and its no-run mark."""
    blocks = []
    lines = page.read_text(encoding="utf-8").splitlines()
    i = 0
    while i < len(lines):
        opening = FENCE.match(lines[i])
        if not opening:
            i += 1
            continue
        indent, language = opening.groups()
        start, i = i, i + 1
        body = []
        while i < len(lines) and not lines[i].strip().startswith("```"):
            body.append(lines[i][len(indent) :] if lines[i].startswith(indent) else lines[i])
            i += 1
        i += 1  # the closing fence
        before = next((lines[j].strip() for j in range(start - 1, -1, -1) if lines[j].strip()), "")
        mark = NO_RUN.match(before)
        blocks.append(Block(page, start + 1, language.lower(), "\n".join(body) + "\n",
                            mark.group("reason") if mark else None))  # fmt: skip
    return blocks


ALL_BLOCKS = [block for page in PAGES for block in fenced_blocks(page)]
PYTHON_BLOCKS = [block for block in ALL_BLOCKS if block.language in ("python", "py")]


def test_the_pages_have_python_blocks_and_every_exception_gives_its_reason():
    assert len(PYTHON_BLOCKS) >= 10, [block.where for block in PYTHON_BLOCKS]
    for block in PYTHON_BLOCKS:
        assert block.no_run is None or block.no_run, f"{block.where}: no-run without a reason"


def test_no_python_block_is_a_shell_command():
    """Commands are ```bash blocks: a python block that starts like one is mislabelled."""
    for block in PYTHON_BLOCKS:
        first = block.code.lstrip().split("\n", 1)[0]
        assert not re.match(r"(\$ |pip |python |bastra |mkdocs )", first), (
            f"{block.where}: a shell command in a python block, make it ```bash"
        )


@pytest.mark.parametrize("block", PYTHON_BLOCKS, ids=[block.where for block in PYTHON_BLOCKS])
def test_every_python_block_runs_as_written(block: Block, tmp_path: Path):
    if block.no_run is not None:
        pytest.skip(f"{block.where} is marked no-run: {block.no_run}")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT), os.environ.get(
        "PYTHONPATH")])), MPLBACKEND="Agg")  # fmt: skip
    try:
        done = subprocess.run([sys.executable, "-c", block.code], cwd=tmp_path, env=env,
                              capture_output=True, text=True, timeout=BLOCK_TIMEOUT_S)  # fmt: skip
    except subprocess.TimeoutExpired:
        pytest.fail(f"{block.where}: the block ran past {BLOCK_TIMEOUT_S} s")
    assert done.returncode == 0, f"{block.where}: the block failed\n{done.stderr[-3000:]}"


# README's links (mkdocs build --strict checks those of docs/) ---------------------------------

LINK = re.compile(r"\]\((?P<target>[^)\s]+)\)")


def anchors_of(page: Path) -> set[str]:
    """The ids that mkdocs' ``toc`` gives the headings of a page (its default ``slugify``)."""
    text = re.sub(r"```.*?```", "", page.read_text(encoding="utf-8"), flags=re.S)
    anchors = set()
    for heading in re.findall(r"^#+\s+(.*?)\s*#*$", text, flags=re.M):
        words = re.sub(r"[`*]|\[([^]]*)\]\([^)]*\)", r"\1", heading)
        words = unicodedata.normalize("NFKD", words).encode("ascii", "ignore").decode()
        anchors.add(re.sub(r"[-\s]+", "-", re.sub(r"[^\w\s-]", "", words).strip().lower()))
    return anchors


def test_the_readme_links_only_to_files_of_the_repository_and_their_anchors():
    readme = ROOT / "README.md"
    for target in LINK.findall(readme.read_text(encoding="utf-8")):
        if re.match(r"[a-z]+://", target):
            continue  # a public website
        path, _, anchor = target.partition("#")
        file = (readme.parent / path).resolve() if path else readme
        assert file.is_relative_to(ROOT) and file.exists(), f"README.md links to {target}"
        if anchor:
            assert anchor in anchors_of(file), f"README.md links to {target}: no such heading"


# The architecture page names every module ---------------------------------------------------


def modules_of(package: str) -> list[str]:
    """Every module of a package, by its dotted name, found on disk (so a module that moves or
    is renamed is looked for under its new name). ``__init__`` and ``__main__`` are left out:
    a package's row on the page stands for them."""
    names = []
    for path in sorted((ROOT / package).rglob("*.py")):
        if path.stem in ("__init__", "__main__") or "__pycache__" in path.parts:
            continue
        names.append(".".join(path.relative_to(ROOT).with_suffix("").parts))
    return names


def named_on_page(module: str, page: str) -> bool:
    """Named in full (`` `agents.search.players` ``), or by its last part (`` `players` ``) in a
    table row that names its package (`` `agents.search` ``, or one of its modules in full)."""
    if f"`{module}`" in page:
        return True
    parent, leaf = module.rsplit(".", 1)
    return any(
        f"`{leaf}`" in row and (f"`{parent}`" in row or f"`{parent}." in row)
        for row in page.splitlines()
        if row.startswith("|")
    )


def test_every_module_is_named_on_the_architecture_page():
    page = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    modules = modules_of("bastra_env") + modules_of("agents")
    assert len(modules) > 40, modules
    missing = [module for module in modules if not named_on_page(module, page)]
    assert not missing, f"modules not named on docs/architecture.md: {missing}"


# Figures quoted from measurement files ------------------------------------------------------

FIGURES_SPEC = importlib.util.spec_from_file_location("docs_figures", ROOT / "docs" / "figures.py")
assert FIGURES_SPEC is not None and FIGURES_SPEC.loader is not None
figures = importlib.util.module_from_spec(FIGURES_SPEC)
FIGURES_SPEC.loader.exec_module(figures)
MEASURED = re.compile(
    r"\d+\.\d+%|\d{1,3}(?:,\d{3})+|[+-]\d+\.\d+|\b\d+(?:\.\d+)?x\b|±|\b1[0-9]{3}\b"
)
"""What a measured figure looks like in prose: 74.6%, 25,429, +3.89, 0.98x, ± 20, an Elo rating."""
NOT_MEASURED = {"1,024"}  # the vector env's batch in the examples: a setting, not a result


def test_every_quoted_figure_is_rendered_from_its_measurement_file():
    """The README and the docs quote each measurement through a block of ``docs/figures.py``,
    so a figure quoted on several pages comes from one file: a page whose block differs from
    its file fails here, and ``python docs/figures.py`` rewrites it."""
    stale = figures.stale()
    assert not stale, (
        f"blocks differ from their measurement files (python docs/figures.py): {stale}"
    )


def test_each_block_is_named_once_in_the_renderers_and_quoted_somewhere():
    used: set[str] = set()
    for page in PAGES:
        text = page.read_text(encoding="utf-8")
        opened = len(re.findall(r"<!-- figures:[a-z0-9_]+ -->", text))
        closed = len(re.findall(r"<!-- /figures:[a-z0-9_]+ -->", text))
        assert opened == closed, (
            f"{page.relative_to(ROOT)}: {opened} blocks opened, {closed} closed"
        )
        names = [match["name"] for match in figures.MARK.finditer(text)]
        assert len(names) == opened, f"{page.relative_to(ROOT)}: a block's markers do not pair up"
        used |= set(names)
        for number, line in enumerate(text.splitlines(), 1):  # an HTML comment opening a line
            inline = re.match(r"\s*<!-- /?figures:[a-z0-9_]+ -->\S", line)  # starts an HTML block
            assert not inline, f"{page.relative_to(ROOT)}:{number}: a phrase's block opens a line"
    assert used <= set(figures.BLOCKS), f"no renderer for {sorted(used - set(figures.BLOCKS))}"
    assert set(figures.BLOCKS) <= used, f"never quoted: {sorted(set(figures.BLOCKS) - used)}"


def test_a_block_edited_by_hand_is_caught(tmp_path: Path):
    """The check can fail: a page whose block was edited (a figure typed in) is reported, and
    rendering puts the file's figure back."""
    page = tmp_path / "page.md"
    right = figures.render(
        "<!-- figures:vector_speed_words -->X<!-- /figures:vector_speed_words -->"
    )
    page.write_text(right.replace("million", "billion"), encoding="utf-8")
    assert figures.stale([page]) == ["page.md: vector_speed_words"]
    page.write_text(right, encoding="utf-8")
    assert figures.stale([page]) == []
    with pytest.raises(KeyError, match="no figures block named 'speed'"):
        figures.render("<!-- figures:speed -->1<!-- /figures:speed -->", "page.md")


def test_a_learning_curve_share_rounds_half_up():
    """``eval.csv`` writes win rates of 200 games, exact halves of a tenth of a percent: the
    pages print 0.5075 as 50.8% (binary floats would give 50.7%)."""
    assert figures.curve_share("0.5075") == "50.8%"
    assert figures.curve_share("0.5125") == "51.3%"
    assert figures.curve_share("0.5375") == "53.8%"


def test_the_front_page_quotes_measurements_only_through_blocks():
    """Outside its blocks and code, the README states no measured figure (a percentage, a
    count, a ratio, an interval, a rating): the front page cannot drift from the files."""
    text = figures.MARK.sub("", (ROOT / "README.md").read_text(encoding="utf-8"))
    text = re.sub(r"```.*?```", "", text, flags=re.DOTALL)
    loose = sorted(set(MEASURED.findall(text)) - NOT_MEASURED)
    assert not loose, f"README.md quotes {loose} outside a docs/figures.py block"
