"""TorchRL's PettingZooWrapper runs Bastra's AEC env, masks included (skipped without torchrl).

Each play is checked against the env itself: the wrapper's action mask against
``legal_actions()``, its observation against ``observe()``, the chosen action against both, and
the env's own illegal-move signal (``TerminateIllegalWrapper``: the game ends with -1 for the
offender, terminated and truncated) is shown to reach TorchRL, so it cannot pass unseen.
"""

from __future__ import annotations

import importlib.util
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("torchrl", reason="TorchRL is an optional extra: pip install -e '.[torchrl]'")

import torch
from tensordict.nn import TensorDictModule
from torchrl.envs import PettingZooWrapper
from torchrl.envs.utils import step_mdp
from torchrl.modules import MaskedCategorical, ProbabilisticActor

import bastra_env
from bastra_env.layout import OBSERVATION_SIZE

pytestmark = [
    pytest.mark.filterwarnings("ignore:PettingZoo in TorchRL is tested:UserWarning"),
    # TorchRL 0.14's own collectors module, on import
    pytest.mark.filterwarnings("ignore:Creating .*WeightUpdater:DeprecationWarning"),
]

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "torchrl_masked.py"
TABLES = {"2p": {"num_players": 2}, "4p_teams": {"num_players": 4, "teams": True}}
GROUP = "players"


def wrap(table: str, group_map=None, seed: int = 0, **kwargs) -> PettingZooWrapper:
    base = bastra_env.env(max_rounds=1, reward="points", **TABLES[table], **kwargs)
    if group_map == "one":
        group_map = {GROUP: list(base.possible_agents)}
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="PettingZoo in TorchRL is tested")
        return PettingZooWrapper(base, use_mask=True, group_map=group_map, seed=seed)


def masked_actor(seed: int = 0) -> ProbabilisticActor:
    torch.manual_seed(seed)
    net = TensorDictModule(
        torch.nn.Linear(OBSERVATION_SIZE, 208),
        in_keys=[(GROUP, "observation", "observation")],
        out_keys=[(GROUP, "logits")],
    )
    return ProbabilisticActor(
        net,
        in_keys={"logits": (GROUP, "logits"), "mask": (GROUP, "action_mask")},
        out_keys=[(GROUP, "action")],
        distribution_class=MaskedCategorical,
        return_log_prob=True,
        log_prob_key=(GROUP, "log_prob"),
    )


def test_default_grouping_keys_and_specs():
    env = wrap("2p")
    # an AEC env gets one group per agent by default, each of batch size 1
    assert env.group_map == {"player_0": ["player_0"], "player_1": ["player_1"]}
    td = env.reset()
    for agent in env.group_map:
        assert env.full_action_spec[agent, "action"].space.n == 208  # categorical_actions=True
        # a dict observation, nested
        assert td[agent, "observation", "observation"].shape == (1, OBSERVATION_SIZE)
        assert ("observation", "action_mask") not in td[agent].keys(True)  # moved up a level
        assert td[agent, "action_mask"].shape == (1, 208)
        assert td[agent, "action_mask"].dtype == torch.bool
    base = env._env.unwrapped
    mover, other = base.agent_selection, next(a for a in env.group_map if a != base.agent_selection)
    assert td[mover, "mask"].tolist() == [True] and td[other, "mask"].tolist() == [False]
    # the acting group's action mask is the env's; the other's is all True
    legal = base.legal_actions()
    assert torch.nonzero(td[mover, "action_mask"][0]).flatten().tolist() == legal
    assert len(legal) < 208 and td[other, "action_mask"].all()


@pytest.mark.parametrize("table", sorted(TABLES))
def test_masked_actor_plays_whole_rounds_checked_against_the_env(table):
    env = wrap(table, group_map="one", seed=1)
    base = env._env.unwrapped  # bastra_env's raw_env
    n = TABLES[table]["num_players"]
    actor = masked_actor()
    for _ in range(2):
        td = env.reset()
        plays = 0
        while True:
            agent = base.agent_selection
            seat = base.agent_name_mapping[agent]
            legal = base.legal_actions()
            td = actor(td)
            assert td[GROUP, "mask"].tolist() == [i == seat for i in range(n)]
            mask = td[GROUP, "action_mask"][seat]
            assert torch.nonzero(mask).flatten().tolist() == legal
            observed = base.observe(agent)["observation"]
            assert np.array_equal(td[GROUP, "observation", "observation"][seat].numpy(), observed)
            action = int(td[GROUP, "action"][seat])
            assert action in legal
            # the sample's log-probability is the softmax over the legal logits only
            masked = td[GROUP, "logits"][seat].masked_fill(~mask, -torch.inf)
            log_prob = torch.log_softmax(masked, -1)[action]
            assert torch.isclose(td[GROUP, "log_prob"][seat], log_prob, atol=1e-5)
            td = env.step(td)
            plays += 1
            nxt = td["next"]
            if nxt["done"].item():
                break
            assert not nxt[GROUP, "reward"].any()  # nothing is paid before the round ends
            td = step_mdp(td)
        assert plays == 48
        assert nxt["terminated"].item() and not nxt["truncated"].item()  # not an illegal ending
        rewards = nxt[GROUP, "reward"].flatten().tolist()
        points = base.infos["player_0"]["round_result"]["points"]
        sides = [points[f"player_{i}"] for i in range(2)]
        expected = [float(sides[i % 2] - sides[1 - i % 2]) for i in range(n)]  # partners share
        assert rewards == expected
        assert sum(rewards) == 0 and base.game.done


def test_an_illegal_action_reaches_torchrl_as_the_env_ends_it():
    env = wrap("2p", group_map="one")
    td = env.reset()
    seat = int(td[GROUP, "mask"].float().argmax())
    illegal = int(torch.nonzero(~td[GROUP, "action_mask"][seat])[0])
    action = torch.zeros(2, dtype=torch.int64)
    action[seat] = illegal
    td[GROUP, "action"] = action
    nxt = env.step(td)["next"]  # PettingZoo logs "Illegal move made, game terminating ..."
    # what the checks above rule out: the game ends at once, terminated and truncated, -1
    assert nxt["done"].item() and nxt["terminated"].item() and nxt["truncated"].item()
    expected = [-1.0 if i == seat else 0.0 for i in range(2)]
    assert nxt[GROUP, "reward"].flatten().tolist() == expected


def test_random_rollout_with_default_groups_respects_the_mask():
    env = wrap("4p_teams", seed=3)
    rollout = env.rollout(200, break_when_any_done=True)  # actions from the masked action spec
    assert rollout.batch_size == (48,)
    assert rollout["next", "terminated"][-1].item() and not rollout["next", "truncated"].any()
    for agent in env.group_map:
        acting = rollout[agent, "mask"][:, 0]
        assert acting.sum() == 12  # 48 plays, 12 each
        chosen = rollout[agent, "action"][acting, 0]
        assert rollout[agent, "action_mask"][acting, 0][torch.arange(12), chosen].all()


def load_example():
    spec = importlib.util.spec_from_file_location("torchrl_masked", EXAMPLE)
    module = importlib.util.module_from_spec(spec)
    sys.modules["torchrl_masked"] = module
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("table", sorted(TABLES))
def test_example_collects_whole_legal_rounds(table, capsys):
    stats = load_example().main(["--table", table, "--rounds", "2", "--seed", "5"])
    assert stats == {
        "plays": 96,
        "rounds": 2,
        "full_rounds": 2,
        "illegal": 0,
        "illegal_endings": 0,
        "zero_sum_rounds": 2,
    }
    assert "96 plays, 2 rounds (2 of 48 plays), 0 illegal plays" in capsys.readouterr().out


def test_example_count_sees_an_illegal_play():
    example = load_example()
    env = example.make_env("2p")
    td = env.reset()
    seat = int(td[GROUP, "mask"].float().argmax())
    action = torch.zeros(2, dtype=torch.int64)
    action[seat] = int(torch.nonzero(~td[GROUP, "action_mask"][seat])[0])
    td[GROUP, "action"] = action
    td = env.step(td)
    stats = example.count(td.unsqueeze(0))
    assert stats["illegal"] == 1 and stats["illegal_endings"] == 1
    assert stats["rounds"] == 1 and stats["full_rounds"] == 0
