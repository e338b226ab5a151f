"""OpenSpiel's own IS-MCTS bot against the project's heuristic player, in OpenSpiel's loop.

    pip install -e ".[openspiel]"
    python examples/openspiel_ismcts.py [--rounds 20] [--simulations 50]

Bastra is registered with OpenSpiel as ``python_bastra`` by ``import bastra_env.openspiel``;
``agents.integrations.openspiel.PolicyBot`` seats any of the project's players. Each deal is
played twice with the seats swapped (a duplicate pair), single rounds.
"""

from __future__ import annotations

import argparse

import numpy as np
import pyspiel
from open_spiel.python.algorithms import evaluate_bots, ismcts, mcts

import bastra_env.openspiel  # noqa: F401  (registers python_bastra)
from agents import HeuristicPolicy
from agents.integrations.openspiel import PolicyBot


class SearchBot(ismcts.ISMCTSBot):
    """OpenSpiel's Python IS-MCTS bot; it searches afresh at every move, so it has nothing to
    restart or note (``evaluate_bots`` asks every bot to)."""

    def restart_at(self, state: object) -> None:
        pass

    def inform_action(self, state: object, player_id: int, action: int) -> None:
        pass


def play(rounds: int, simulations: int, seed: int = 0) -> dict[str, float]:
    """``rounds`` duplicate pairs of single rounds; the search bot's mean return and wins."""
    game = pyspiel.load_game("python_bastra", {"max_rounds": 1})
    returns = []
    for deal in range(rounds):
        for seat in (0, 1):
            rng = np.random.RandomState(seed + deal)  # the same deals for both seatings
            search = SearchBot(
                game, mcts.RandomRolloutEvaluator(1, np.random.RandomState(deal)), uct_c=2.0,
                max_simulations=simulations, random_state=np.random.RandomState(deal),
            )  # fmt: skip
            bots: list[pyspiel.Bot] = [PolicyBot(HeuristicPolicy(), p) for p in range(2)]
            bots[seat] = search
            result = evaluate_bots.evaluate_bots(game.new_initial_state(), bots, rng)
            returns.append(result[seat])
    wins = sum(r > 0 for r in returns) + 0.5 * sum(r == 0 for r in returns)
    return {"rounds": len(returns), "mean_return": float(np.mean(returns)),
            "win_rate": wins / len(returns)}  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=20, help="duplicate pairs of rounds")
    parser.add_argument("--simulations", type=int, default=50)
    args = parser.parse_args()
    found = play(args.rounds, args.simulations)
    print(f"OpenSpiel IS-MCTS ({args.simulations} simulations a move) against the heuristic "
          f"player: {found['win_rate']:.1%} of {found['rounds']} rounds, mean return "
          f"{found['mean_return']:+.2f}")  # fmt: skip


if __name__ == "__main__":
    main()
