"""agents.train (train.py): a smoke run, determinism, resume, checkpoints, configuration errors."""

import csv
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
    assert resolved["total_env_steps"] == 3000 and resolved["hidden"] == [64, 64]
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
         "--num-players", "4", "--eval-opponents", "greedy", "--learning-rate", "0.001"]
    )  # fmt: skip
    assert config.hidden == [32, 16] and config.teams and config.num_players == 4
    assert config.eval_opponents == ["greedy"] and config.learning_rate == 0.001
    assert run_dir == tmp_path and resume is None


@pytest.mark.parametrize(
    "args, message",
    [
        (["--pool-prob", "2"], "pool_prob must be in"),
        (["--num-envs", "0"], "num_envs must be a positive int"),
        (["--teams", "maybe"], "cannot read 'maybe'"),
        (["--num-players", "3", "--teams", "true"], "teams needs num_players=4"),
        (["--eval-opponents", "nobody"], "eval_opponents: unknown policy 'nobody'"),
        (["--baseline-opponents", "pimc:0", "--baseline-prob", "0.1"], "not a search player"),
        (["--init-from", "greedy"], "init_from 'greedy' must be a checkpoint"),
        (["--hidden", "a,b"], "cannot read"),
        (["--baseline-prob", "0.9"], "pool_prob \\+ baseline_prob must be at most 1"),
        (["--baseline-opponents", "", "--baseline-prob", "0.1"], "needs baseline_opponents"),
        (["--reward", "wins"], "reward must be one of"),
        (["--train-rounds", "-1"], "train_rounds must be an int >= 0"),
        (["--num-players", "3", "--reward", "equity"], 'reward "equity" needs two sides'),
        (["--imitation-teacher", "oracle"], "imitation_teacher 'oracle' is not among"),
    ],
)
def test_bad_config_values_are_refused_with_the_field_named(args, message):
    with pytest.raises((ValueError, TypeError), match=message):
        train.parse_config([*SMOKE, *args])


def test_unknown_yaml_fields_are_refused(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("num_players: 2\nlearning_rat: 0.1\n")
    with pytest.raises(ValueError, match=r"unknown config field\(s\) \['learning_rat'\]"):
        train.parse_config(["--config", str(bad)])


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


@pytest.mark.parametrize("table", [{"num_players": 2}, {"num_players": 4, "teams": True}])
def test_equity_rewards_of_a_whole_game_add_up_to_its_result(table):
    """``reward="equity"`` pays each round the change in the chance of winning: over a game to
    100 the rounds' rewards telescope to +1 for the winning side (-1 for the other)."""
    import numpy as np

    from agents import HeuristicPolicy
    from agents.search.equity import game_equity
    from bastra_env.compiled_rules import SCORES
    from bastra_env.vector import VectorEnv

    equity = game_equity("2p" if table["num_players"] == 2 else "4p_teams", 100)
    heuristic = HeuristicPolicy()
    for seed in range(3):
        venv = VectorEnv(1, seed=seed, **table)
        state = venv.reset()
        totals, paid, rounds = np.zeros(2, dtype=np.int64), 0.0, 0
        while True:
            action = heuristic.act_batch(state["observation"], state["action_mask"])
            state = venv.step(action)
            if state["round_ended"][0]:
                rounds += 1
                ended = bool(state["terminated"][0])
                after = venv.states[0, SCORES : SCORES + 2].copy()
                change = train.equity_reward(equity, totals, after, ended, int(state["winner"][0]))
                assert -2.0 <= change <= 2.0
                paid += change
                totals = after
                if ended:
                    break
        assert rounds > 2
        expected = {0: 1.0, 1: -1.0, -1: 0.0}[int(state["winner"][0])]
        assert paid == pytest.approx(expected, abs=1e-9)


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


def test_the_privileged_critic_reads_hidden_cards_the_policy_never_sees():
    """Swapping a card between the other hand and the deck changes the critic's input and value,
    and neither the observation nor the policy's output."""
    import numpy as np

    from agents.learning.features import action_inputs_batch
    from agents.learning.network import PolicyValueNet, PrivilegedCritic
    from bastra_env import compiled_rules as K
    from bastra_env.layout import NUM_ACTIONS, OBSERVATION_SIZE
    from bastra_env.vector import VectorEnv

    venv = VectorEnv(1, seed=3, num_players=2)
    venv.reset(seed=3)
    state = venv.states[0]
    seat = int(state[K.CURRENT])

    def views():
        obs = np.zeros(OBSERVATION_SIZE, dtype=np.float32)
        mask = np.zeros(NUM_ACTIONS, dtype=np.uint8)
        K.legal_slots(state, venv._rules_row, K.capture_work())
        K.encode(state, venv._rules_row, seat, obs, mask)
        return obs[None], mask[None].astype(bool), venv.privileged()

    torch.manual_seed(0)
    actor, critic = PolicyValueNet(), PrivilegedCritic()
    obs, mask, hidden = views()
    other = int(state[K.HANDS + 1 - seat])
    card = other & -other  # one card of the other hand ...
    pos = int(state[K.DECK_POS])
    deck_card = int(state[K.DECK + pos])  # ... swapped with the next card of the deck
    state[K.HANDS + 1 - seat] = other ^ card ^ (1 << deck_card)
    state[K.DECK + pos] = card.bit_length() - 1
    obs2, mask2, hidden2 = views()
    assert np.array_equal(obs, obs2) and np.array_equal(mask, mask2)
    assert not np.array_equal(hidden, hidden2)

    def act(o, m):
        ids, features = action_inputs_batch(o, m)
        with torch.no_grad():
            return actor.slot_logits(torch.from_numpy(o), torch.from_numpy(ids),
                                     torch.from_numpy(features))[0]  # fmt: skip

    assert torch.equal(act(obs, mask), act(obs2, mask2))
    with torch.no_grad():
        before = critic(torch.from_numpy(obs), torch.from_numpy(hidden))
        after = critic(torch.from_numpy(obs2), torch.from_numpy(hidden2))
    assert not torch.equal(before, after)


def test_a_run_with_the_privileged_critic_trains_and_resumes_exactly(tmp_path):
    first = tmp_path / "first"
    summary = train.main([*SMOKE, "--run-dir", str(first), "--critic", "privileged"])
    assert torch.load(first / "final.pt", weights_only=True)["critic"]  # saved for resuming
    resumed = tmp_path / "resumed"
    train.main(["--resume", str(first / "checkpoint_000002.pt"), "--run-dir", str(resumed),
                "--threads", str(summary["threads"])])  # fmt: skip
    a = torch.load(first / "final.pt", weights_only=True)
    b = torch.load(resumed / "final.pt", weights_only=True)
    assert same_weights(a["model"], b["model"]) and same_weights(a["critic"], b["critic"])
    policy = load_policy(first / "final.pt")  # the policy loads and plays without its critic
    env = bastra_env.env()
    env.reset(seed=0)
    assert env.unwrapped.observe(env.agent_selection)["action_mask"][
        policy.act(env.observe(env.agent_selection))
    ]
    with pytest.raises(ValueError, match="critic must be one of"):
        train.parse_config([*SMOKE, "--critic", "oracle"])
