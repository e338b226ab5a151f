"""Networks together: is an ensemble of trained networks stronger than each alone?

    python experiments/ensemble_strength.py bastra_2p runs/ppo2p_priv15m/final.pt

The ensemble plays the legal move with the highest mean log-probability over its networks (no
search, greedy, as ``MODEL:network``); it plays full games on duplicate deals against the
heuristic and against the first network alone, and so does each network alone against the
heuristic, on the same deals.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402
import torch  # noqa: E402

from agents.evaluation.matches import duplicate_match  # noqa: E402
from agents.learning.config import SearchConfig  # noqa: E402
from agents.learning.policy import LearnedPolicy, load_learned  # noqa: E402
from agents.players.heuristic import HeuristicPolicy  # noqa: E402
from agents.players.observation_kernels import batch_arrays  # noqa: E402
from bastra_env.rules import TABLES  # noqa: E402


class Ensemble:
    """The legal move with the highest mean log-probability over ``members``."""

    def __init__(self, members: list[LearnedPolicy]) -> None:
        self.members, self.name = members, "ensemble"

    @torch.no_grad()
    def act_batch(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        obs, mask = batch_arrays(observations, masks)  # checked shapes, as LearnedPolicy's
        flat = np.ascontiguousarray(obs, dtype=np.float32)
        total = sum(torch.log_softmax(p._network(flat, mask)[0], -1) for p in self.members)
        assert isinstance(total, torch.Tensor)
        return torch.argmax(total, -1).numpy().astype(np.int64)

    def act(self, observation: dict[str, Any], env: object = None) -> int:
        obs = np.asarray(observation["observation"])[None]
        return int(self.act_batch(obs, np.asarray(observation["action_mask"])[None])[0])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("models", nargs="+", help="packaged names or checkpoint paths")
    parser.add_argument("--table", default="2p", choices=list(TABLES))
    parser.add_argument("--deals", type=int, default=500, help="duplicate deals (x2 games)")
    parser.add_argument("--seed", type=int, default=2026)
    args = parser.parse_args()
    if len(args.models) < 2:
        parser.error("give two networks or more")
    torch.set_num_threads(1)
    members = [load_learned(m, search=SearchConfig(endgame=False), name=Path(m).stem)
               for m in args.models]  # fmt: skip
    ensemble = Ensemble(members)
    lines = [(ensemble, HeuristicPolicy(), "ensemble vs heuristic")]
    lines += [(m, HeuristicPolicy(), f"{spec} alone vs heuristic")
              for m, spec in zip(members, args.models, strict=True)]  # fmt: skip
    lines.append((ensemble, members[0], f"ensemble vs {args.models[0]} alone"))
    print(f"full games, {2 * args.deals} a line (duplicate deals, seed {args.seed}):")
    for a, b, label in lines:
        started = time.perf_counter()
        r = duplicate_match(a, b, table=args.table, deals=args.deals, mode="game", seed=args.seed,
                            num_threads=1)  # fmt: skip
        print(f"  {label}: {r.win_rate:.1%} [{r.ci_low:.1%}, {r.ci_high:.1%}], "
              f"{r.point_diff:+.2f} points a game ({time.perf_counter() - started:.0f} s)",
              flush=True)  # fmt: skip


if __name__ == "__main__":
    main()
