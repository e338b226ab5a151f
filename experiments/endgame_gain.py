"""What the endgame search (``agents.search.endgame``) is worth: the heuristic player with and
without it.

    python experiments/endgame_gain.py [--deals 300] [--game-deals 100]

Duplicate deals: "heuristic+search" plays the heuristic's moves until the endgame search applies
(two players: the deck is empty; teams: the deck is empty and at most three cards in hand), then
the search's best move. Prints single rounds and full games against the plain heuristic, and the
search's cost per call.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from agents import HeuristicPolicy
from agents.evaluation.matches import duplicate_match
from agents.evaluation.ratings import results_table
from agents.search.endgame import solve


class SearchingHeuristic:
    """The heuristic player, with the endgame search where it applies."""

    name = "heuristic+search"

    def __init__(self) -> None:
        self.heuristic = HeuristicPolicy()
        self.calls, self.seconds = 0, 0.0

    def act(self, observation, env=None) -> int:
        started = time.perf_counter()
        values = solve(observation)
        if values is None:
            return self.heuristic.act(observation)
        self.calls += 1
        self.seconds += time.perf_counter() - started
        return max(values, key=values.get)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--deals", type=int, default=300, help="single-round deals (x2 games)")
    parser.add_argument("--game-deals", type=int, default=100, help="full-game deals (x2 games)")
    parser.add_argument("--seed", type=int, default=2026)
    args = parser.parse_args()
    torch.set_num_threads(1)
    results = []
    for table in ("2p", "4p_teams"):
        for mode, deals in (("round", args.deals), ("game", args.game_deals)):
            searching = SearchingHeuristic()
            result = duplicate_match(
                searching, HeuristicPolicy(), table=table, deals=deals, mode=mode,
                seed=args.seed, names=(f"{table}: heuristic+search", "heuristic"),
            )  # fmt: skip
            per_call = 1e3 * searching.seconds / max(searching.calls, 1)
            print(f"{result.line()}  [{mode}s; search {per_call:.2f} ms per call]", flush=True)
            results.append(result)
    print()
    print(results_table(results))


if __name__ == "__main__":
    main()
