"""agents.train (train.py): a smoke run, determinism, resume, checkpoints, configuration errors."""

import csv
import dataclasses
import subprocess
import sys
from pathlib import Path

import pytest
import torch
import yaml

import agents.train as train
import bastra_env
from agents import load_policy
from agents.learning.policy import PRETRAINED_DIR

SMOKE = ["--config", "smoke"]  # the shipped configs/smoke.yaml, by name


def weights(path):
    return torch.load(path, weights_only=True)["model"]


def same_weights(a, b):
    return all(torch.equal(a[k], b[k]) for k in a) and a.keys() == b.keys()


@pytest.fixture(scope="module")
def smoke_run(tmp_path_factory):
    run_dir = tmp_path_factory.mktemp("smoke")
    summary = train.main([*SMOKE, "--run-dir", str(run_dir)])
    return run_dir, summary


def test_smoke_training_writes_a_complete_run(smoke_run):
    run_dir, summary = smoke_run
    for name in (
        "config.yaml",
        "metrics.csv",
        "eval.csv",
        "final.pt",
        "curves.png",
        "summary.json",
    ):
        assert (run_dir / name).is_file(), name
    assert any((run_dir / "tensorboard").iterdir())
    assert sorted(p.name for p in run_dir.glob("checkpoint_*.pt")) == ["checkpoint_000002.pt"]
    rows = list(csv.DictReader((run_dir / "metrics.csv").open()))
    assert len(rows) == summary["updates"] >= 2 and float(rows[-1]["samples_per_s"]) > 0
    evals = list(csv.DictReader((run_dir / "eval.csv").open()))
    assert {r["opponent"] for r in evals} == {"random", "greedy"}
    assert all(float(r["ci_low"]) <= float(r["win_rate"]) <= float(r["ci_high"]) for r in evals)
    resolved = yaml.safe_load((run_dir / "config.yaml").read_text())
    assert resolved["ppo"]["total_env_steps"] == 3000 and resolved["ppo"]["hidden"] == [64, 64]
    assert "endgame" not in resolved  # the algorithm's own section only
    assert set(summary["final_eval"]) == {"random", "greedy"}


def test_the_trained_policy_loads_and_plays_legally(smoke_run):
    policy = load_policy(smoke_run[0] / "final.pt")
    env = bastra_env.raw_env()
    env.reset(seed=0)
    while not env.game.done:
        env.step(policy.act(env.observe(env.agent_selection)))


def test_same_seed_same_run_and_resume_continues_exactly(smoke_run, tmp_path):
    run_dir, summary = smoke_run
    again = tmp_path / "again"  # the same seed on the same number of threads (torch's sums can
    train.main([*SMOKE, "--run-dir", str(again), "--threads", str(summary["threads"])])  # differ)
    assert same_weights(weights(run_dir / "final.pt"), weights(again / "final.pt"))
    resumed = tmp_path / "resumed"
    train.main(["--resume", str(run_dir / "checkpoint_000002.pt"), "--run-dir", str(resumed)])
    assert same_weights(weights(run_dir / "final.pt"), weights(resumed / "final.pt"))
    other = tmp_path / "other"
    train.main([*SMOKE, "--run-dir", str(other), "--seed", "1"])
    assert not same_weights(weights(run_dir / "final.pt"), weights(other / "final.pt"))


def test_command_line_overrides_every_field(tmp_path):
    config, run_dir, resume = train.parse_config(
        [*SMOKE, "--run-dir", str(tmp_path), "--hidden", "32,16", "--teams", "true",
         "--num-players", "4", "--eval.opponents", "greedy", "ppo.learning_rate=0.001",
         "--ppo.total-env-steps=500", "deals=7"]
    )  # fmt: skip
    assert config.ppo.hidden == [32, 16] and config.teams and config.num_players == 4
    assert config.eval.opponents == ["greedy"] and config.ppo.learning_rate == 0.001
    assert config.ppo.total_env_steps == 500 and config.eval.deals == 7
    assert config.ppo.num_envs == 8  # the rest of the section from the YAML file
    assert run_dir == tmp_path and resume is None


@pytest.mark.parametrize(
    "args, message",
    [
        (["--pool-prob", "2"], r"ppo.pool_prob must be a number in \[0, 1\]"),
        (["--num-envs", "0"], "ppo.num_envs must be a positive int"),
        (["--teams", "maybe"], "cannot read 'maybe'"),
        (["--num-players", "3", "--teams", "true"], "teams needs num_players=4"),
        (["--opponents", "nobody"], "eval.opponents: unknown policy 'nobody'"),
        (["--baseline-opponents", "pimc:0", "--baseline-prob", "0.1"], "not a search player"),
        (["--init-from", "greedy"], "init_from 'greedy' must be a checkpoint"),
        (["--hidden", "a,b"], "cannot read"),
        (["--baseline-prob", "0.9"], "pool_prob \\+ ppo.baseline_prob must be at most 1"),
        (["--baseline-opponents", "", "--baseline-prob", "0.1"], "needs ppo.baseline_opponents"),
        (["--reward", "equity"], "reward: equity measured within noise and was removed"),
        (["--critic", "privileged"], "critic: privileged measured within noise"),
        (["--train-rounds", "-1"], "train_rounds must be an int >= 0"),
        (["--imitation-teacher", "oracle"], "imitation_teacher must be one of"),
        (["--rounds", "5"], r"the endgame: section has it: endgame.rounds"),
        (["endgame.rounds=5"], "algorithm ppo reads no endgame: section"),
        (["--threads", "many"], "cannot read 'many'"),
    ],
)
def test_bad_config_values_are_refused_with_the_field_named(args, message):
    with pytest.raises((ValueError, TypeError), match=message):
        train.parse_config([*SMOKE, *args])


@pytest.mark.parametrize(
    "text, message",
    [
        ("num_players: 2\nlearning_rat: 0.1\n", r"unknown config field\(s\) \['learning_rat'\]"),
        ("ppo:\n  learning_rat: 0.1\n", r"unknown field\(s\) \['learning_rat'\] in the ppo: "
         r"section; did you mean 'learning_rate'\?"),
        ("total_env_steps: 10\n", r"the ppo: section has it: ppo.total_env_steps"),
        ("ppo:\n  learning_rate: fast\n", "learning_rate must be a positive number, got 'fast'"),
        ("ppo:\n  num_envs: 2.5\n", "ppo.num_envs must be a positive int, got 2.5"),
        ("ppo:\n  hidden: 64\n", "ppo.hidden must be a list of positive ints, got 64"),
        ("ppo: [1, 2]\n", "ppo: must hold a mapping"),
        ("eval:\n  deals: 0\n", "eval.deals must be a positive int"),
        ("algorithm: endgame\ninit_from: bastra_2p\nppo:\n  num_envs: 4\n",
         "algorithm endgame reads no ppo: section"),
        ("algorithm: endgame\n", "set init_from"),
        ("ppo:\n  num_envs: 4\n  - oops\n", r"not valid YAML \(line 3, column 3\)"),
        ("extends: nowhere\n", "'nowhere': no such file, and not a shipped config"),
        ("[1, 2]\n", "must hold a mapping of config fields"),
    ],
)  # fmt: skip
def test_bad_config_files_are_refused_with_the_field_named_and_no_run_folder(
    tmp_path, monkeypatch, text, message
):
    """A wrong field, type or section, or a YAML syntax error: a ValueError that names it, from
    the command line exit status 2 and no run folder (never a TypeError from inside the
    optimizer)."""
    bad = tmp_path / "bad.yaml"
    bad.write_text(text)
    with pytest.raises(ValueError, match=message):
        train.parse_config(["--config", str(bad)])
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as exit_status:
        train.main(["--config", str(bad)])
    assert exit_status.value.code == 2
    assert not (tmp_path / "runs").exists()


def test_the_shipped_runs_share_their_base_and_every_field_is_documented():
    """2p and 4p_teams extend ppo_base (the same PPO section), the endgame configs endgame_base;
    every field of every section has its one-line docstring and a rule."""
    from agents.training.config import (
        Config,
        EndgameConfig,
        EvalConfig,
        PPOConfig,
        field_docs,
        shipped_configs,
    )

    two, four = (train.parse_config(["--config", name])[0] for name in ("2p", "4p_teams"))
    assert two.ppo == four.ppo and two.eval == four.eval and (two.num_players, four.teams) == (
        2, True)  # fmt: skip
    e2, e4 = (train.parse_config(["--config", f"endgame_{t}"])[0] for t in ("2p", "4p_teams"))
    assert e2.endgame.epochs == e4.endgame.epochs == 6 and e2.eval.mode == e4.eval.mode == "game"
    for name in shipped_configs():  # every shipped config reads as it is
        train.parse_config(["--config", name])
    for section in (Config, EvalConfig, PPOConfig, EndgameConfig):
        docs = field_docs(section)
        for f in dataclasses.fields(section):
            if f.name not in ("eval", "ppo", "endgame"):
                assert docs.get(f.name), f"{section.__name__}.{f.name} has no docstring"
                assert f.metadata.get("check"), f"{section.__name__}.{f.name} has no rule"


def test_resume_refuses_a_corrupt_checkpoint(tmp_path):
    broken = tmp_path / "broken.pt"
    broken.write_bytes(b"\x00" * 64)
    with pytest.raises(ValueError, match="not a readable checkpoint"):
        train.parse_config(["--resume", str(broken)])


def test_checkpoint_errors_say_what_is_wrong_and_never_suggest_unsafe_loading(tmp_path):
    import pickle

    truncated = tmp_path / "truncated.pt"
    truncated.write_bytes((PRETRAINED_DIR / "bastra_2p.pt").read_bytes()[:2000])
    foreign = tmp_path / "foreign.pt"
    foreign.write_bytes(pickle.dumps([1, 2]))
    objects = tmp_path / "objects.pt"
    torch.save({"a": Path("x")}, objects)
    for path, reason in ((truncated, "damaged or truncated"), (foreign, "Python objects"),
                         (objects, "Python objects")):  # fmt: skip
        with pytest.raises(ValueError, match="not a readable checkpoint") as error:
            train.parse_config(["--resume", str(path)])
        assert reason in str(error.value)
        assert "weights_only" not in str(error.value)


def test_resume_of_a_policy_file_says_so_and_makes_no_run_folder(tmp_path, monkeypatch):
    """``bastra train --resume`` of an exported or packaged policy: a message naming what
    --resume takes, exit status 2, no run folder."""
    monkeypatch.chdir(tmp_path)
    exported = tmp_path / "exported.pt"
    exported.write_bytes((PRETRAINED_DIR / "bastra_2p.pt").read_bytes())
    done = subprocess.run(
        [sys.executable, "-m", "agents.train", "--config", "quick", "--resume", str(exported)],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 2
    assert "is a policy file" in done.stderr and "init_from=" in done.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["exported.pt"]


def test_export_keeps_the_policy_and_drops_the_training_state(smoke_run, tmp_path):
    from agents.apps.export import export_policy

    run_dir, _ = smoke_run
    slim = export_policy(run_dir / "final.pt", tmp_path / "slim.pt")
    full = torch.load(run_dir / "final.pt", weights_only=True)
    kept = torch.load(slim, weights_only=True)
    assert "optimizer" in full and "optimizer" not in kept and "pool" not in kept
    assert kept["config"] == full["config"]
    assert same_weights(full["model"], kept["model"])
    assert slim.stat().st_size < (run_dir / "final.pt").stat().st_size
    load_policy(slim)


def test_a_best_response_run_starts_from_a_model_against_it_frozen(tmp_path):
    """init_from + a packaged model as the only opponent (benchmarks/best_response.py's setup):
    the learner starts from the model's weights and shape, and its games are all against it."""
    from agents.learning.policy import pretrained_path

    args = [*SMOKE, "--run-dir", str(tmp_path), "--init-from", "bastra_2p",
            "--baseline-opponents", "bastra_2p,pimc:2", "--baseline-prob", "1.0",
            "--pool-prob", "0.0", "--imitation-samples", "0", "--total-env-steps", "600",
            "--rollout-steps", "300", "--checkpoint-every", "1", "--eval-every", "0"]  # fmt: skip
    train.main(args)
    start = weights(pretrained_path("bastra_2p"))
    first = weights(tmp_path / "checkpoint_000001.pt")
    assert first.keys() == start.keys()
    assert all(first[k].shape == start[k].shape for k in start)
    assert not same_weights(first, start)  # it trained
    moved = max(float((first[k].float() - start[k].float()).abs().max()) for k in start)
    assert moved < 0.05  # one small update away from the model, not a fresh network


def test_threads_auto_takes_the_free_cores_and_says_when_it_takes_fewer():
    from agents.training.threads import AUTO_CAP, choose_threads
    from bastra_env.vector import available_cores

    cores = available_cores()
    idle = choose_threads("auto", busy=0)
    assert idle.threads == min(cores, AUTO_CAP) and idle.note is None
    loaded = choose_threads("auto", busy=cores)
    assert loaded.threads == 1
    if min(cores, AUTO_CAP) > 1:
        assert "other work keeps" in loaded.note and "--threads N" in loaded.note
    assert choose_threads(3).threads == 3  # a count is taken as given
    assert train.Config(threads="2").threads == 2
    for bad in ("many", 0, -1, True, 1.5):
        with pytest.raises(ValueError, match='threads must be "auto" or a positive int'):
            train.Config(threads=bad)


def test_busy_cores_sees_a_busy_loop_on_one_of_its_cores():
    import os
    import subprocess
    import sys

    from agents.training.threads import busy_cores

    core = sorted(os.sched_getaffinity(0))[0]
    loop = subprocess.Popen(
        [sys.executable, "-c", f"import os; os.sched_setaffinity(0, {{{core}}})\nwhile True: pass"]
    )
    try:
        assert busy_cores(0.5) >= 1
    finally:
        loop.kill()
        loop.wait()
