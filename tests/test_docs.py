"""Docs that cannot drift: every ```python block of README.md and docs/ runs as written, README's
links land on files and headings of the repository, every module of both packages is named on
the architecture page, and the quick run's figures are those of the file that measured them.

A block that must not run says so, and why, on the line before it: ``<!-- no-run: reason -->``.
"""

from __future__ import annotations

import json
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


# The quick run's figures --------------------------------------------------------------------


def test_the_quick_run_is_quoted_as_measured():
    """The README's first command is timed once, by ``benchmarks/quick_run.py``, into
    ``docs/quick_run.json``; the pages that quote its time and win rates quote that file."""
    run = json.loads((ROOT / "docs" / "quick_run.json").read_text(encoding="utf-8"))
    time = f"{run['plays']:,} plays: {run['train_seconds']} s of training, {run['wall_seconds']} s"
    rates = [f"{rate}%" for rate in run["win_rates"].values()]
    quoted = {"README.md": [time, *rates], "docs/getting-started.md": [time, *rates],
              "docs/speed.md": [time]}  # fmt: skip
    for page, figures in quoted.items():
        text = " ".join((ROOT / page).read_text(encoding="utf-8").split())
        for figure in figures:
            assert figure in text, f"{page} does not quote '{figure}' (docs/quick_run.json)"
