"""PIMC's leaf: the perfect-information critic one play deep against rollouts to the round's end.

    python experiments/exit_leaf.py RUN/checkpoint_000040.pt [--deals 200] [--worlds 32]

Both players are the expert of expert iteration on the checkpoint's best network (PIMC on
``--worlds`` inferred worlds, the network's log-probability at 0.3 points a nat, the endgame
search on the last two deals); one values each world after a move with the run's critic
(``exit_leaf: value``), the other rolls it out (``exit_leaf: rollout``). Duplicate single rounds,
the same deals for both, and each player's time a searched move.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import torch  # noqa: E402

from agents.evaluation.matches import duplicate_match  # noqa: E402
from agents.experimental.expert import (  # noqa: E402
    ExpertConfig,
    PrivilegedCritic,
    critic_leaf,
)
from agents.experimental.privileged import ValueLeafPIMC  # noqa: E402
from agents.learning.network import read_checkpoint  # noqa: E402
from agents.learning.policy import load_learned, trained_table  # noqa: E402


class Timed:
    """A player that counts its time."""

    def __init__(self, policy: object, name: str) -> None:
        self.policy, self.name, self.seconds, self.moves = policy, name, 0.0, 0

    def act_batch(self, observations, masks):  # type: ignore[no-untyped-def]
        started = time.perf_counter()
        out = self.policy.act_batch(observations, masks)  # type: ignore[attr-defined]
        self.seconds += time.perf_counter() - started
        self.moves += len(out)
        return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("checkpoint")
    parser.add_argument("--deals", type=int, default=200)
    parser.add_argument("--worlds", type=int, default=32)
    parser.add_argument("--seed", type=int, default=4000)
    args = parser.parse_args()
    torch.set_num_threads(1)
    payload = read_checkpoint(args.checkpoint)
    if "critic" not in payload:
        raise SystemExit(f"{args.checkpoint} holds no critic: an expert-iteration checkpoint?")
    table = trained_table(payload) or "2p"
    search = ExpertConfig(rules=payload["rules"], worlds=args.worlds).search()
    critic = PrivilegedCritic(payload["network"]["observation_size"],
                              tuple(payload["config"]["exit"]["hidden"]))  # fmt: skip
    critic.load_state_dict(payload["critic"])
    critic.eval()
    value = load_learned(args.checkpoint, search=search, name="value leaf")
    assert value.pimc is not None
    leaf = critic_leaf(critic, payload["config"]["exit"]["reward_scale"])
    value.pimc = ValueLeafPIMC.around(value.pimc, leaf)
    rollout = load_learned(args.checkpoint, search=search, name="rollout leaf")
    a, b = Timed(value, "value leaf"), Timed(rollout, "rollout leaf")
    result = duplicate_match(a, b, table=table, deals=args.deals, mode="round", seed=args.seed,
                             names=("value leaf", "rollout leaf"), progress=True)  # fmt: skip
    print(f"value leaf against rollout leaf, {result.games} rounds on duplicate deals: "
          f"{result.win_rate:.1%} [{result.ci_low:.1%}, {result.ci_high:.1%}], "
          f"{result.point_diff:+.2f} points a round")  # fmt: skip
    for player in (a, b):
        print(f"  {player.name}: {1000 * player.seconds / max(player.moves, 1):.1f} ms a move")


if __name__ == "__main__":
    main()
