"""Bastra through TorchRL: PettingZooWrapper, a masked categorical policy, a collector.

    pip install -e ".[torchrl]"
    python examples/torchrl_masked.py --table 2p --rounds 4        # or --table 4p_teams

TorchRL's ``PettingZooWrapper`` takes the AEC env as it is (``use_mask=True``, as every
turn-based env needs). Here every seat is put in one group, ``"players"``, so one network acts for
all of them; the keys are then

- ``("players", "observation", "observation")``: float32 ``[num_players, 1125]``, each seat's own
  view (the wrapper keeps the dict observation as a nested TensorDict minus its mask),
- ``("players", "action_mask")``: bool ``[num_players, 208]``, the legal actions of the seat to
  move (all True for the others),
- ``("players", "mask")``: bool ``[num_players]``, True only for the seat to move,
- ``("players", "action")``: int64 ``[num_players]``; only the seat to move's entry is played,
- ``("next", "players", "reward")``: float32 ``[num_players, 1]``, every seat's reward that step.

An illegal action ends the game (PettingZoo's ``TerminateIllegalWrapper`` inside
``bastra_env.env()``): reward -1 for the offender and ``terminated`` *and* ``truncated`` set, so
``count`` below counts both a played action outside the mask and such an ending.
"""

from __future__ import annotations

import argparse
import inspect
import warnings

import torch
from tensordict.nn import TensorDictModule
from torchrl.envs import PettingZooWrapper
from torchrl.modules import MaskedCategorical, ProbabilisticActor

import bastra_env
from bastra_env.layout import NUM_ACTIONS, OBSERVATION_SIZE

try:  # TorchRL 0.14 renamed SyncDataCollector to Collector (and dropped the old name)
    from torchrl.collectors import Collector
except ImportError:  # pragma: no cover - older TorchRL
    from torchrl.collectors import SyncDataCollector as Collector

GROUP = "players"
PLAYS_PER_ROUND = 48  # 52 cards, 4 dealt to the board: every round has 48 plays
TABLES = {"2p": {"num_players": 2}, "4p_teams": {"num_players": 4, "teams": True}}

# TorchRL is tested against PettingZoo 1.24.3 and says so on every wrapper; 1.27 works (see tests).
warnings.filterwarnings("ignore", message="PettingZoo in TorchRL is tested")


def make_env(table: str = "2p", seed: int = 0, reward: str = "points") -> PettingZooWrapper:
    """One-round games (``max_rounds=1``) of ``table``, every seat in the group ``"players"``."""
    base = bastra_env.env(max_rounds=1, reward=reward, **TABLES[table])
    return PettingZooWrapper(
        base, use_mask=True, group_map={GROUP: list(base.possible_agents)}, seed=seed
    )


def make_actor(seed: int = 0) -> ProbabilisticActor:
    """A linear layer's logits, sampled by ``MaskedCategorical`` under the action mask."""
    torch.manual_seed(seed)
    logits = TensorDictModule(
        torch.nn.Linear(OBSERVATION_SIZE, NUM_ACTIONS),
        in_keys=[(GROUP, "observation", "observation")],
        out_keys=[(GROUP, "logits")],
    )
    return ProbabilisticActor(
        logits,
        in_keys={"logits": (GROUP, "logits"), "mask": (GROUP, "action_mask")},
        out_keys=[(GROUP, "action")],
        distribution_class=MaskedCategorical,
        return_log_prob=True,
        log_prob_key=(GROUP, "log_prob"),
    )


def make_collector(env: PettingZooWrapper, actor, rounds: int):
    """A single-process collector returning ``rounds`` whole rounds in one batch."""
    frames = rounds * PLAYS_PER_ROUND
    kwargs = {}
    if "auto_register_policy_transforms" in inspect.signature(Collector.__init__).parameters:
        # TorchRL 0.14 asks for an InitTracker for any policy; this one is not recurrent
        kwargs["auto_register_policy_transforms"] = False
    return Collector(env, actor, frames_per_batch=frames, total_frames=frames, **kwargs)


def count(batch) -> dict[str, int]:
    """Plays, finished rounds and illegal plays in a collected batch (``[frames]``)."""
    acting = batch[GROUP, "mask"]  # [T, P]: the seat to move
    seat = acting.float().argmax(-1)
    steps = torch.arange(len(seat))
    action = batch[GROUP, "action"][steps, seat]
    legal = batch[GROUP, "action_mask"][steps, seat, action]
    done = batch["next", "done"].squeeze(-1)
    ends = torch.nonzero(done).flatten() + 1
    lengths = torch.diff(ends, prepend=ends.new_zeros(1))
    rewards = batch["next", GROUP, "reward"].squeeze(-1)[done]
    return {
        "plays": len(seat),
        "rounds": int(done.sum()),
        "full_rounds": int((lengths == PLAYS_PER_ROUND).sum()),
        "illegal": int((~legal).sum()) + int((acting.sum(-1) != 1).sum()),
        "illegal_endings": int(batch["next", "truncated"].sum()),
        "zero_sum_rounds": int((rewards.sum(-1).abs() < 1e-6).sum()),
    }


def main(argv: list[str] | None = None) -> dict[str, int]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--table", choices=sorted(TABLES), default="2p")
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)

    env = make_env(args.table, seed=args.seed)
    actor = make_actor(seed=args.seed)
    collector = make_collector(env, actor, args.rounds)
    batch = next(iter(collector))
    collector.shutdown()
    stats = count(batch)
    print(
        f"{args.table}: group map {env.group_map}; {stats['plays']} plays, "
        f"{stats['rounds']} rounds ({stats['full_rounds']} of {PLAYS_PER_ROUND} plays), "
        f"{stats['illegal']} illegal plays, "
        f"{stats['illegal_endings']} games ended by an illegal play, "
        f"{stats['zero_sum_rounds']} rounds with zero-sum point rewards"
    )
    env.close()
    return stats


if __name__ == "__main__":
    main()
