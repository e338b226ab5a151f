"""EXPERIMENTAL expert iteration (``agents.experimental``; ``bastra train --config exit_smoke``
stays runnable though it measured no better): the expert's shards (deterministic, right
targets), PIMC's value leaf and its critic, the trainer (a run, its files, an exact resume), and
the same data on local Ray actors."""

from __future__ import annotations

import csv
from dataclasses import replace

import numpy as np
import pytest
import torch

import agents.train as train
from agents import load_policy
from agents.experimental.exit import ExitConfig, ExitSection
from agents.experimental.expert import (
    SHARD_FIELDS,
    ExpertConfig,
    PrivilegedCritic,
    Weights,
    play_shard,
    shard_seed,
)
from agents.experimental.privileged import ValueLeafPIMC, leaf_inputs, privileged
from agents.learning.config import PRESETS
from agents.learning.network import NetworkConfig, PolicyValueNet
from agents.search import world_kernels as S
from agents.search.players import PIMCPolicy
from agents.search.positions import position_of
from bastra_env import Rules
from bastra_env.layout import OBSERVATION_SIZE, OFFSETS
from bastra_env.vector import VectorEnv

from .helpers import shards_digest

RULES_2P = Rules(num_players=2, max_rounds=1).to_dict()
TINY = [
    "--config", "exit_smoke", "exit.iterations=2", "exit.games=4", "exit.shard_games=2",
    "exit.worlds=4", "exit.gate_deals=4", "eval.deals=2", "eval.opponents=random",
    "threads=1",
]  # fmt: skip


def tiny_weights(critic: bool = False, seed: int = 0) -> Weights:
    torch.manual_seed(seed)
    model = PolicyValueNet(NetworkConfig(hidden=(32,), pair_width=16))
    return Weights.of(model, PrivilegedCritic(hidden=(32,)) if critic else None)


def digest(shards: list[dict]) -> str:
    return shards_digest(shards, SHARD_FIELDS)


def test_a_shard_is_the_same_for_its_seed_and_its_targets_are_the_searchs():
    weights, config = tiny_weights(), ExpertConfig(rules=RULES_2P, worlds=4, games=2)
    first, again = play_shard(weights, config, 7), play_shard(weights, config, 7)
    assert digest([first]) == digest([again])
    assert digest([play_shard(weights, config, 8)]) != digest([first])
    n = first["decisions"]
    assert n == 96 and first["obs"].shape == (n, OBSERVATION_SIZE)  # two rounds of 48 plays
    target = first["target"].astype(np.float64)
    assert np.allclose(target.sum(1), 1.0, atol=2e-3)
    assert not target[~first["mask"]].any()  # only legal moves
    single = first["mask"].sum(1) == 1
    assert np.array_equal(~single, first["searched"])
    assert np.allclose(target[single].max(1), 1.0)
    # a searched decision's target is a softmax over its legal moves: spread over some of them
    searched = first["searched"]
    assert (target[searched].max(axis=1) < 1 - 1e-3).mean() > 0.5
    # the value targets: each seat's round point difference (x0.05); the two seats' are opposite
    values = first["value"]
    assert set(np.round(np.abs(values) / 0.05, 3)) - {0.0} and np.all(np.abs(values) < 3)
    assert abs(values.sum()) < 1e-4  # zero-sum: 48 decisions of each seat a round, opposite


def test_shard_seeds_are_fixed_and_distinct():
    seeds = [shard_seed(0, it, s) for it in (1, 2) for s in range(4)]
    assert len(set(seeds)) == 8 and seeds == [shard_seed(0, it, s) for it in (1, 2) for s in
                                              range(4)]  # fmt: skip
    assert shard_seed(1, 1, 0) != shard_seed(0, 1, 0)


def test_the_expert_searches_as_the_tables_infer_player_at_its_worlds_and_weight():
    shipped = PRESETS["bastra_2p:infer"]
    expert = ExpertConfig(rules=RULES_2P, worlds=64, network_weight=0.3).search()
    assert expert == replace(shipped, objective="points")  # its values in round points
    assert expert.misfit_rollout_model_weight == 0.5  # the 2p table's, not the default
    teams = Rules(num_players=4, teams=True, max_rounds=1).to_dict()
    expert = ExpertConfig(rules=teams, worlds=16, network_weight=0.2).search()
    assert expert == replace(PRESETS["bastra_4p_teams:infer"], objective="points",
                             infer_worlds=16, network_weight=0.2)  # fmt: skip


def test_expert_config_refuses_bad_fields():
    with pytest.raises(ValueError, match="worlds must be a positive int"):
        ExpertConfig(rules=RULES_2P, worlds=0)
    with pytest.raises(ValueError, match="leaf must be one of"):
        ExpertConfig(rules=RULES_2P, leaf="net")
    with pytest.raises(ValueError, match="temperature must be positive"):
        ExpertConfig(rules=RULES_2P, temperature=0)
    with pytest.raises(ValueError, match="needs the perfect-information critic"):
        play_shard(tiny_weights(), ExpertConfig(rules=RULES_2P, leaf="value"), 0)


def test_the_value_leaf_sees_the_next_seat_and_the_round_end_exactly():
    env = VectorEnv(1, rules=Rules(num_players=2, max_rounds=1), seed=3, num_threads=1)
    state = env.reset(seed=3)
    rng = np.random.default_rng(0)
    checked_end = False
    for _ in range(48):
        obs = state["observation"][0]
        position, rules, cards, sizes = position_of(obs)
        worlds = S.uniform_worlds(position, cards, sizes, 3, np.array([5], dtype=np.uint64))
        seen, hidden, mine, ended, exact = leaf_inputs(position, rules, worlds)
        moves = int(state["action_mask"][0].sum())
        assert seen.shape[0] == 3 * moves
        live = ~ended
        # the seat to move after my play is the other one; its hand is the first hidden block
        assert not mine[live].any()
        hand = seen[live][:, OFFSETS["hand"]]
        assert np.array_equal(hand, hidden[live][:, :52])
        if ended.any():
            checked_end = True
            assert ended.all() and np.all(np.abs(exact) <= 30)
        state = env.step(np.array([env.sample_legal(rng)[0]]))
    assert checked_end  # the round's last play: every move ends it, valued exactly

    # PIMC with a leaf: the leaf's values replace the rollouts (a constant leaf: all moves equal)
    env.reset(seed=4)
    observation = {"observation": env._arrays["observation"][0],
                   "action_mask": env._arrays["action_mask"][0]}  # fmt: skip
    pimc = PIMCPolicy(8, seed=0, endgame=False)
    leafed = ValueLeafPIMC.around(pimc, lambda obs, hidden, mine: np.full(len(obs), 2.5))
    values = leafed.action_values(observation)
    assert set(values.values()) == {2.5}
    assert len(set(pimc.action_values(observation).values())) > 1  # the search it came from


def test_the_value_leaf_plays_a_shard_with_the_critic():
    config = ExpertConfig(rules=RULES_2P, worlds=4, games=1, leaf="value")
    out = play_shard(tiny_weights(critic=True), config, 1)
    assert out["decisions"] == 48 and out["searched_decisions"] > 20


def read_metrics(run_dir):
    return list(csv.DictReader((run_dir / "metrics.csv").open()))


def test_an_exit_run_writes_its_files_and_resumes_exactly(tmp_path):
    run = tmp_path / "run"
    summary = train.main([*TINY, "exit.ray_workers=0", "--run-dir", str(run)])
    for name in ("final.pt", "checkpoint_000001.pt", "checkpoint_000002.pt", "curves.png",
                 "eval.csv", "summary.json", "config.yaml"):  # fmt: skip
        assert (run / name).is_file(), name
    rows = read_metrics(run)
    assert [r["iteration"] for r in rows] == ["1", "2"]
    assert all(0 <= float(r["gate_win_rate"]) <= 1 and r["accepted"] in "01" for r in rows)
    assert int(rows[-1]["plays"]) == 2 * 4 * 48 == summary["env_steps"]
    gates = [r for r in csv.DictReader((run / "eval.csv").open()) if "gate" in r["opponent"]]
    assert len(gates) == 2
    policy = load_policy(str(run / "final.pt"))
    assert policy.model.config.hidden == (64, 64)

    resumed = tmp_path / "resumed"
    train.main(["--resume", str(run / "checkpoint_000001.pt"), "--run-dir", str(resumed)])
    a = torch.load(run / "final.pt", weights_only=True)
    b = torch.load(resumed / "final.pt", weights_only=True)
    for key in ("model", "learner", "critic"):
        assert all(torch.equal(a[key][k], b[key][k]) for k in a[key]), key
    assert read_metrics(resumed)[-1]["gate_win_rate"] == rows[-1]["gate_win_rate"]


def test_bad_exit_fields_are_named():
    with pytest.raises(ValueError, match=r"exit\.worlds must be a positive int"):
        ExitConfig(algorithm="exit", exit=ExitSection(worlds=0))
    with pytest.raises(ValueError, match="algorithm must be one of"):
        train.Config(algorithm="exit")  # the shipped Config knows no experiment
    with pytest.raises(ValueError, match=r"exit\.ray_workers must be an int >= 0"):
        ExitConfig(algorithm="exit", exit=ExitSection(ray_workers=-1))
    with pytest.raises(ValueError, match="train_rounds must be 1"):
        ExitConfig(algorithm="exit", train_rounds=0)
    with pytest.raises(ValueError, match=r"exit\.leaf must be one of"):
        ExitConfig(algorithm="exit", exit=ExitSection(leaf="network"))
    with pytest.raises(ValueError, match="algorithm ppo reads no exit: section"):
        ExitConfig(exit=ExitSection(worlds=3))


def test_the_privileged_critic_reads_hidden_cards_the_policy_never_sees():
    """The value leaf's critic: swapping a card between the other hand and the deck changes the
    critic's input and value, and neither the observation nor the policy's output."""
    from agents.learning.features import action_inputs_batch
    from bastra_env import compiled_rules as K
    from bastra_env.layout import NUM_ACTIONS

    venv = VectorEnv(1, seed=3, num_players=2)
    venv.reset(seed=3)
    state = venv.states[0]
    seat = int(state[K.CURRENT])

    def views():
        obs = np.zeros(OBSERVATION_SIZE, dtype=np.float32)
        mask = np.zeros(NUM_ACTIONS, dtype=np.uint8)
        K.legal_slots(state, venv._rules_row, K.capture_work())
        K.encode(state, venv._rules_row, seat, obs, mask)
        return obs[None], mask[None].astype(bool), privileged(venv)

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


@pytest.mark.slow
def test_exit_smoke_runs_on_local_ray_actors_and_loads(tmp_path, local_ray):
    run = tmp_path / "ray"
    summary = train.main([*TINY, "exit.ray_workers=2", "--run-dir", str(run)])
    local = tmp_path / "local"
    train.main([*TINY, "exit.ray_workers=0", "--run-dir", str(local)])
    a = torch.load(run / "final.pt", weights_only=True)
    b = torch.load(local / "final.pt", weights_only=True)
    assert all(torch.equal(a["model"][k], b["model"][k]) for k in a["model"])  # same data
    assert summary["updates"] == 2
    assert load_policy(str(run / "final.pt")).act is not None
