"""The architecture as contracts a tool checks: the floors of ``[tool.importlinter]`` in
``pyproject.toml`` hold (every import downward, lazy ones inside functions included, no cycle),
and an import that breaks one is named by the tool."""

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
LINT_IMPORTS = shutil.which("lint-imports") or str(Path(sys.executable).with_name("lint-imports"))
needs_import_linter = pytest.mark.skipif(
    not Path(LINT_IMPORTS).exists(),
    reason="import-linter is not installed (pip install -e '.[dev]')",
)


def lint_imports(cwd: Path) -> subprocess.CompletedProcess:
    env = {"PYTHONPATH": str(cwd), "PATH": str(Path(sys.executable).parent)}
    return subprocess.run(
        [LINT_IMPORTS, "--no-cache"], cwd=cwd, env=env, capture_output=True, text=True, timeout=300
    )


def copy_of_the_packages(tmp_path: Path) -> Path:
    """The sources of both packages and ``pyproject.toml``, nothing else, in a folder of their
    own (so a test may break an import without touching the checkout)."""
    for package in ("bastra_env", "agents"):
        shutil.copytree(ROOT / package, tmp_path / package,
                        ignore=shutil.ignore_patterns("__pycache__", "*.pt", "web"))  # fmt: skip
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    return tmp_path


@needs_import_linter
def test_every_contract_of_the_floors_holds():
    done = lint_imports(ROOT)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "BROKEN" not in done.stdout and "0 broken" in done.stdout


@needs_import_linter
@pytest.mark.parametrize(
    ("module", "statement", "named"),
    [
        # an upward import, even lazily inside a function: the search may not use the trainer
        ("agents/search/players.py", "def f():\n    import agents.training.ppo\n",
         "agents.search.players -> agents.training.ppo"),
        # the environments never import the players (nor torch)
        ("bastra_env/render.py", "import agents.registry\n", "bastra_env.render -> agents"),
        ("agents/players/heuristic.py", "import torch\n", "agents.players.heuristic -> torch"),
        # inside the package, the facade is never imported
        ("agents/search/endgame.py", "def g():\n    from agents import make_policy\n",
         "agents.search.endgame -> agents"),
    ],
    ids=["upward", "env-imports-agents", "players-import-torch", "facade"],
)
def test_an_import_that_breaks_a_contract_is_named(tmp_path, module, statement, named):
    copy = copy_of_the_packages(tmp_path)
    with (copy / module).open("a") as source:
        source.write("\n\n" + statement)
    done = lint_imports(copy)
    assert done.returncode != 0
    assert named in done.stdout, done.stdout[-3000:]


def test_agents_keeps_at_most_eight_modules_at_its_top_level():
    """The floors live in subpackages; the top level holds the facade, the registry, the ``bastra``
    command and the thin ``python -m agents.X`` fronts."""
    top = sorted(p.name for p in (ROOT / "agents").glob("*.py"))
    assert len(top) <= 8, top


def test_the_facade_gives_every_public_name_and_imports_them_only_when_asked():
    """``from agents import X`` works for every public name; ``import agents`` itself (and the
    players and the search under it) loads no torch, so ``bastra --help`` starts quickly."""
    code = (
        "import sys, agents, agents.players.heuristic, agents.search.players, agents.cli\n"
        "assert 'torch' not in sys.modules, 'torch imported'\n"
        "from agents import *\n"
        "assert all(getattr(agents, n) is not None for n in agents.__all__)\n"
        "assert agents.load_policy.__module__ == 'agents.registry'\n"
        "try:\n"
        "    agents.no_such_name\n"
        "except AttributeError as error:\n"
        "    assert 'no_such_name' in str(error)\n"
        "else:\n"
        "    raise SystemExit('no AttributeError')\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
