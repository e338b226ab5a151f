"""The ``bastra`` command: one front over training, evaluation, play, the web app, export and
the benchmarks.

    bastra train --config smoke --run-dir runs/smoke
    bastra evaluate bastra_2p heuristic --deals 200
    bastra rate bastra_2p:network
    bastra play --opponent bastra_2p
    bastra serve --port 8000
    bastra export runs/x/final.pt my_model.pt
    bastra bench --list

Each command hands the rest of its command line to its module's ``main(argv)`` (``agents.train``,
``agents.evaluate``, ``agents.play``, ``agents.serve``, ``agents.export``), so it takes exactly the
options of ``python -m agents.<module>`` and its ``--help`` is the module's own. The modules are
imported only when their command runs: ``bastra --help`` needs none of them. ``bench`` runs a
script of ``benchmarks/``, which lives in the source checkout and is not installed.
"""

from __future__ import annotations

import argparse
import ast
import contextlib
import importlib
import io
import subprocess
import sys
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import NoReturn

from agents.training.options import close_match, option_hint

PROG = "bastra"


@dataclass(frozen=True)
class Command:
    module: str | None
    """The module whose ``main(argv)`` runs the command (``None``: handled here)."""
    summary: str
    examples: tuple[str, ...]


COMMANDS = {
    "train": Command(
        "agents.train",
        "self-play training from a YAML config or a shipped one: PPO (smoke, quick, 2p, 4p_teams)"
        " or the endgame's values (endgame_smoke, endgame_2p, endgame_4p_teams)",
        (
            "bastra train --config smoke --run-dir runs/smoke",
            "bastra train --config endgame_smoke --run-dir runs/endgame",
        ),
    ),
    "evaluate": Command(
        "agents.evaluate",
        "head-to-head evaluation over duplicate deals: win rate, 95% interval, point difference",
        ("bastra evaluate bastra_2p heuristic --deals 200",),
    ),
    "rate": Command(
        "agents.evaluation.rate_cli",
        "a policy's Elo on the frozen ladder, variance-reduced, with its 95% interval",
        ("bastra rate bastra_2p:network --precision 20 --minutes 5",),
    ),
    "play": Command(
        "agents.play",
        "play Bastra in the terminal against a model or a built-in player",
        ("bastra play --opponent bastra_2p",),
    ),
    "serve": Command(
        "agents.serve",
        "the web app: play in the browser against the models",
        ("bastra serve --port 8000",),
    ),
    "export": Command(
        "agents.export",
        "copy the policy out of a training checkpoint, without the optimiser and pool",
        ("bastra export runs/x/final.pt my_model.pt",),
    ),
    "bench": Command(
        None,
        "run one of the benchmarks of benchmarks/ (a source checkout's folder)",
        ("bastra bench --list", "bastra bench vector_speed --steps 100"),
    ),
}
"""The subcommands, in the order ``bastra --help`` lists them."""


# --------------------------------------------------------------------------- suggestions
@contextlib.contextmanager
def _suggesting_errors() -> Iterator[None]:
    """Every ``ArgumentParser`` (the modules' own) suggests the closest option, for one call."""
    original = argparse.ArgumentParser.error

    def error(self: argparse.ArgumentParser, message: str) -> NoReturn:
        original(self, message + option_hint(self, message))

    argparse.ArgumentParser.error = error  # type: ignore[method-assign]
    try:
        yield
    finally:
        argparse.ArgumentParser.error = original  # type: ignore[method-assign]


@contextlib.contextmanager
def _program_name(name: str) -> Iterator[None]:
    """argparse names the program after ``sys.argv[0]``: ``bastra train`` in usage and errors."""
    saved = sys.argv[0] if sys.argv else ""
    if not sys.argv:
        sys.argv.append(name)
    sys.argv[0] = name
    try:
        yield
    finally:
        sys.argv[0] = saved


# --------------------------------------------------------------------------- help
def usage() -> str:
    width = max(map(len, COMMANDS))
    lines = [
        f"usage: {PROG} COMMAND [ARGS ...]",
        f"       {PROG} COMMAND --help      (that command's options and examples)",
        "",
        "Bastra RL from the command line. Each command takes the options of its module",
        "(python -m agents.<module>, python train.py in a checkout), as listed by its --help.",
        "",
        "commands:",
    ]
    for name, command in COMMANDS.items():
        lines.append(f"  {name:<{width}}  {command.summary}")
        lines += [f"  {'':<{width}}    e.g. {example}" for example in command.examples]
    lines += [
        "",
        "options:",
        "  -h, --help  show this help and exit",
        "  --version   show the version and exit",
    ]
    return "\n".join(lines)


def _fail(message: str) -> int:
    print(f"usage: {PROG} COMMAND [ARGS ...]   ({PROG} --help lists the commands)", file=sys.stderr)
    print(f"{PROG}: error: {message}", file=sys.stderr)
    return 2


# --------------------------------------------------------------------------- the commands
def main(argv: Sequence[str] | None = None) -> int:
    """The console script ``bastra``: returns the exit status (argparse errors exit with 2)."""
    args = list(sys.argv[1:] if argv is None else argv)
    if not args:
        print(usage())
        return 2
    first, rest = args[0], args[1:]
    if first in ("-h", "--help", "help"):
        if first == "help" and rest and rest[0] in COMMANDS:
            return main([rest[0], "--help"])
        print(usage())
        return 0
    if first == "--version":
        from bastra_env import __version__

        print(f"{PROG} {__version__}")
        return 0
    if first.startswith("-"):
        guess = close_match(first, ["--help", "--version"])
        hint = f"; did you mean {guess}?" if guess else ""
        return _fail(
            f"unknown option {first!r}{hint} (a command comes first, its options after it: "
            f"{PROG} train --config smoke)"
        )
    if first not in COMMANDS:
        guess = close_match(first, list(COMMANDS))
        hint = f"; did you mean {guess!r}?" if guess else ""
        return _fail(f"unknown command {first!r}{hint} (commands: {', '.join(COMMANDS)})")
    if first == "bench":
        return bench(rest)
    return _run_module(first, rest)


def _run_module(name: str, rest: list[str]) -> int:
    command = COMMANDS[name]
    assert command.module is not None
    try:
        module = importlib.import_module(command.module)
    except ModuleNotFoundError as error:
        if error.name != command.module:
            raise  # a dependency of the module is missing: its own message is the clearest
        print(f"{PROG} {name}: {command.module} is not in this installation", file=sys.stderr)
        return 1
    wants_help = "-h" in rest or "--help" in rest
    captured = io.StringIO()  # a --help, to add the examples it may lack
    exit_code: object = None
    with contextlib.ExitStack() as stack:
        stack.enter_context(_program_name(f"{PROG} {name}"))
        stack.enter_context(_suggesting_errors())
        if wants_help:
            stack.enter_context(contextlib.redirect_stdout(captured))
        try:
            result = module.main(rest)
        except SystemExit as done:
            exit_code = done.code if done.code is not None else 0
        except (ValueError, FileNotFoundError) as error:  # bad input: a policy name, a file
            print(f"{PROG} {name}: error: {error}", file=sys.stderr)
            exit_code = 2
    if wants_help and exit_code == 0:
        _print_help(captured.getvalue(), name)
    else:
        sys.stdout.write(captured.getvalue())
    if exit_code is not None:
        raise SystemExit(exit_code)
    return result if isinstance(result, int) else 0


def _print_help(text: str, name: str) -> None:
    """A module's ``--help``, with the command's examples when it does not show them itself."""
    sys.stdout.write(text)
    body = text.split("\n\n", 1)[-1]  # after the usage lines
    examples = [e for e in COMMANDS[name].examples if e not in text]
    if examples and f"{PROG} {name} " not in body:
        print("\nexamples:")
        for example in examples:
            print(f"  {example}")


# --------------------------------------------------------------------------- bench
def benchmarks_dir() -> Path | None:
    """``benchmarks/`` of the source checkout this package runs from (an editable install), or
    of the working directory; ``None`` for an installed wheel run elsewhere."""
    for root in (Path(__file__).resolve().parents[1], Path.cwd()):
        folder = root / "benchmarks"
        if (folder / "__init__.py").is_file():
            return folder
    return None


def benchmark_names(folder: Path) -> dict[str, str]:
    """Each benchmark script's name and the first line of its docstring (read, not imported)."""
    found = {}
    for path in sorted(folder.glob("*.py")):
        if path.name.startswith("_"):
            continue
        try:
            doc = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))) or ""
        except SyntaxError:
            doc = ""
        found[path.stem] = doc.splitlines()[0].replace("``", "") if doc else ""
    return found


NOT_IN_CHECKOUT = (
    "The benchmarks are scripts of the source checkout (the benchmarks/ folder beside agents/ in a "
    "clone of the repository); they are not installed with the package. In a checkout, run "
    f"`{PROG} bench NAME` there (or `python benchmarks/NAME.py`); the env anchors need "
    '`pip install -e ".[bench]"`.'
)


def bench_help(folder: Path | None) -> str:
    lines = [
        f"usage: {PROG} bench NAME [OPTIONS ...]   (runs benchmarks/NAME.py with those options)",
        f"       {PROG} bench NAME --help           (that benchmark's options)",
        f"       {PROG} bench --list",
        "",
        "Run one benchmark of the source checkout's benchmarks/ folder; it prints its figures",
        "beside its anchors, measured in the same run.",
        "",
    ]
    if folder is None:
        return "\n".join([*lines, NOT_IN_CHECKOUT])
    names = benchmark_names(folder)
    width = max(map(len, names), default=0)
    lines.append(f"benchmarks (in {folder}):")
    lines += [f"  {name:<{width}}  {summary}" for name, summary in names.items()]
    lines += ["", "examples:", *(f"  {e}" for e in COMMANDS["bench"].examples)]
    return "\n".join(lines)


def bench(rest: list[str]) -> int:
    """``bastra bench``: list the benchmarks, or run one as ``python benchmarks/NAME.py``."""
    folder = benchmarks_dir()
    if not rest or rest[0] in ("-h", "--help", "--list", "-l"):
        print(bench_help(folder))
        return 0 if rest else 2
    name, options = rest[0].removesuffix(".py"), rest[1:]
    if folder is None:
        print(f"{PROG} bench: error: {NOT_IN_CHECKOUT}", file=sys.stderr)
        return 2
    names = benchmark_names(folder)
    if name not in names:
        guess = close_match(name, list(names))
        hint = f"; did you mean {guess!r}?" if guess else ""
        print(
            f"{PROG} bench: error: unknown benchmark {name!r}{hint} "
            f"(benchmarks: {', '.join(names)})",
            file=sys.stderr,
        )
        return 2
    return subprocess.call([sys.executable, str(folder / f"{name}.py"), *options])


if __name__ == "__main__":
    raise SystemExit(main())
