"""The ``bastra`` command: help texts, suggestions for typos, the shipped configs by name, a
smoke training through it, and the checkout's ``python train.py`` front."""

import importlib.util
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import agents.train
from agents import cli
from agents.training.options import SuggestingParser, option_hint

ROOT = Path(__file__).resolve().parents[1]
FAST = ["--total-env-steps", "1000", "--eval-deals", "1", "--imitation-samples", "0"]
"""The smoke config cut to one update, one deal per evaluation and no warm start (seconds)."""
MODULE_COMMANDS = [name for name, c in cli.COMMANDS.items() if c.module]


def run_cli(args, capsys):
    """``bastra ARGS`` in this process: (exit status, stdout, stderr)."""
    try:
        code = cli.main(args)
    except SystemExit as done:
        code = done.code
    out, err = capsys.readouterr()
    return code, out, err


def test_top_level_help_lists_every_command_with_an_example(capsys):
    code, out, _ = run_cli(["--help"], capsys)
    assert code == 0
    for name, command in cli.COMMANDS.items():
        assert f"\n  {name} " in out
        assert all(example in out for example in command.examples)
    assert run_cli([], capsys)[0] == 2  # no command: the same help, as a usage error
    assert run_cli(["--version"], capsys)[1].startswith("bastra 0.")


@pytest.mark.parametrize("name", MODULE_COMMANDS)
def test_each_command_help_is_its_module_help_with_an_example(name, capsys):
    if importlib.util.find_spec(cli.COMMANDS[name].module) is None:
        pytest.skip(f"{cli.COMMANDS[name].module} is not written yet")
    code, out, _ = run_cli([name, "--help"], capsys)
    assert code == 0
    assert "usage:" in out and "options:" in out
    assert "example" in out and f"bastra {name} " in out.split("\n\n", 1)[1]
    if name != "serve":  # agents.serve names its own program
        assert out.startswith(f"usage: bastra {name} ")
    assert run_cli(["help", name], capsys)[1] == out


def test_an_unknown_command_is_named_with_the_closest_one(capsys):
    code, out, err = run_cli(["trian", "--config", "smoke"], capsys)
    assert code == 2 and not out
    assert "unknown command 'trian'" in err and "did you mean 'train'?" in err
    code, _, err = run_cli(["evalute"], capsys)
    assert code == 2 and "did you mean 'evaluate'?" in err
    code, _, err = run_cli(["--hepl"], capsys)
    assert code == 2 and "unknown option '--hepl'" in err and "did you mean --help?" in err
    code, _, err = run_cli(["xyzzy"], capsys)
    assert code == 2 and "did you mean" not in err and "commands: train, evaluate" in err


def test_an_unknown_option_gets_argparse_message_and_the_closest_option(capsys):
    code, _, err = run_cli(["play", "--tabel", "2p"], capsys)
    assert code == 2
    assert "unrecognized arguments: --tabel 2p" in err and "did you mean --table?" in err
    code, _, err = run_cli(["train", "--config", "smoke", "--lerning-rate", "0.1"], capsys)
    assert code == 2 and "'--lerning-rate'" in err and "did you mean --learning-rate?" in err
    parser = SuggestingParser(prog="x")
    parser.add_argument("--mode", choices=["round", "game"])
    assert "did you mean 'round'?" in option_hint(
        parser, "argument --mode: invalid choice: 'rounds' (choose from 'round', 'game')"
    )


def test_an_unknown_config_field_is_named_with_the_closest_field(capsys, tmp_path):
    code, _, err = run_cli(["train", "--config", "smoke", "lerning_rate=0.1"], capsys)
    assert code == 2
    assert "bastra train: error:" in err
    assert "'lerning_rate': unknown config field" in err
    assert "did you mean 'ppo.learning_rate'?" in err
    bad = tmp_path / "bad.yaml"
    bad.write_text("num_players: 2\nent_coeff: 0.1\n")
    with pytest.raises(ValueError, match=r"\['ent_coeff'\]; did you mean 'ppo.ent_coef'\?"):
        agents.train.parse_config(["--config", str(bad)])
    with pytest.raises(ValueError, match=r"did you mean --config configs/2p\.yaml"):
        agents.train.parse_config(["configs/2p.yaml"])  # --config forgotten
    shipped = r"\(2p, 4p_teams, endgame_2p, endgame_4p_teams, endgame_smoke, quick, smoke\)"
    with pytest.raises(ValueError, match=r"not a shipped config " + shipped):
        agents.train.parse_config(["--config", "smok"])
    code, _, err = run_cli(["train", "--config", "4p_team"], capsys)
    assert code == 2 and "did you mean '4p_teams'?" in err


def test_an_unknown_policy_name_gets_the_closest_one(capsys):
    code, _, err = run_cli(["evaluate", "bastra_2q", "greedy"], capsys)
    assert code == 2 and "did you mean 'bastra_2p'?" in err.lower()


def test_config_by_name_by_checkout_path_and_field_value_overrides_agree(tmp_path):
    parse = agents.train.parse_config
    assert agents.train.shipped_configs() == [
        "2p",
        "4p_teams",
        "endgame_2p",
        "endgame_4p_teams",
        "endgame_smoke",
        "quick",
        "smoke",
    ]
    by_name, _, _ = parse(["--config", "smoke"])
    by_path, _, _ = parse(["--config", str(ROOT / "configs" / "smoke.yaml")])
    assert by_name == by_path
    assert (ROOT / "configs" / "smoke.yaml").resolve() == agents.train.resolve_config("smoke")
    dashed, _, _ = parse(["--config", "2p", "--hidden", "32,16", "--teams", "false"])
    equals, _, _ = parse(["--config", "2p", "hidden=32,16", "teams=false"])
    mixed, _, _ = parse(["hidden=32,16", "--config", "2p", "--teams", "false"])
    assert dashed == equals == mixed and dashed.ppo.hidden == [32, 16]


def test_bastra_train_smoke_writes_final_pt(tmp_path, capsys):
    run_dir = tmp_path / "run"
    code = cli.main(["train", "--config", "smoke", "--run-dir", str(run_dir), *FAST])
    assert code == 0
    assert (run_dir / "final.pt").is_file() and (run_dir / "config.yaml").is_file()
    assert "wrote" in capsys.readouterr().out


def test_bench_lists_the_checkout_benchmarks_and_says_where_they_live(capsys, monkeypatch):
    code, out, _ = run_cli(["bench", "--list"], capsys)
    assert code == 0
    for path in (ROOT / "benchmarks").glob("[!_]*.py"):
        assert f"\n  {path.stem} " in out
    code, _, err = run_cli(["bench", "vectr_speed"], capsys)
    assert code == 2 and "did you mean 'vector_speed'?" in err
    monkeypatch.setattr(cli, "benchmarks_dir", lambda: None)  # an installed wheel, elsewhere
    code, out, _ = run_cli(["bench", "--help"], capsys)
    assert code == 0 and "not installed with the package" in out
    code, _, err = run_cli(["bench", "vector_speed"], capsys)
    assert code == 2 and "source checkout" in err


def test_bench_runs_a_benchmark_script_with_its_options(capsys):
    code = cli.main(["bench", "train_speed", "--help"])  # the script's own parser, in a process
    assert code == 0


def _run(args, cwd=ROOT):
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    return subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, timeout=120)


def test_the_checkout_fronts_keep_working():
    done = _run([sys.executable, "train.py", "--help"])
    assert done.returncode == 0 and "usage: train.py" in done.stdout and "examples:" in done.stdout
    done = _run([sys.executable, "-m", "agents.train", "--config", "smok"])
    assert done.returncode == 2 and "did you mean 'smoke'?" in done.stderr
    import train  # the top-level front: the trainer's names

    assert train.main is agents.train.main and train.parse_config is agents.train.parse_config
    assert train.TIMED_PARTS == agents.train.TIMED_PARTS


@pytest.mark.skipif(shutil.which("bastra") is None, reason="the console script is not installed")
def test_the_console_script_is_installed(tmp_path):
    done = _run(["bastra", "--help"], cwd=tmp_path)
    assert done.returncode == 0 and "bastra train" in done.stdout
    done = _run(["bastra", "trian"], cwd=tmp_path)
    assert done.returncode == 2 and "did you mean 'train'?" in done.stderr
