"""What inference from the deal's plays is worth: one player against one opponent on duplicate
deals, the running figures printed every ``--chunk`` deals.

    python experiments/inference_gain.py pimc:64:infer heuristic --mode round --deals 300 \\
        --seed 1000
    python experiments/inference_gain.py bastra_2p:infer pimc:64 --deals 150 --seed 2026
    python experiments/inference_gain.py bastra_4p_teams:infer heuristic --table 4p_teams
    python experiments/inference_gain.py bastra_2p:infer heuristic --no-opponent-model
    python experiments/inference_gain.py bastra_2p:infer heuristic --objective game
    python experiments/inference_gain.py bastra_2p:infer heuristic --model-weight 0
    python experiments/inference_gain.py bastra_2p:infer pimc:64:infer --network-weight 0.1
    python experiments/inference_gain.py bastra_2p:infer pimc:64:infer --rollout-model-weight 0.5

Players are ``make_policy`` names with their default seeds (``pimc:64``, ``pimc:64:infer``,
``bastra_2p``, ``bastra_2p:infer``, ...); in the team game a side is two copies of a player. Deal
``d`` is the game seed ``--seed + d`` in both of its games (seats swapped), so two runs on
consecutive seed ranges (``--seed 2026 --deals 150`` and ``--seed 2176 --deals 150``) together
are one run on 300 deals and can be spread over cores. Prints wins, draws, losses, the win rate
with its 95% interval and the mean point difference, after every chunk: a long run shows its
progress and can be stopped at any chunk.
"""

from __future__ import annotations

import argparse
import sys
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from agents import LearnedPolicy, PIMCPolicy, make_policy  # noqa: E402
from agents.evaluation.matches import duplicate_match, wilson_interval  # noqa: E402
from agents.search.endgame import OBJECTIVES, checked_model_weight  # noqa: E402
from agents.search.players import checked_rollout_model_weight  # noqa: E402
from bastra_env.rules import TABLES  # noqa: E402


def adjusted(player: Any, args: argparse.Namespace, parser: argparse.ArgumentParser) -> Any:
    """The player with the options given on the command line: a model's ``SearchConfig``
    fields (a new ``LearnedPolicy`` on the same network), or a PIMC player's attributes."""
    learned = isinstance(player, LearnedPolicy)
    search = player.pimc if learned else player if isinstance(player, PIMCPolicy) else None
    infers = search is not None and search.infer
    if args.no_opponent_model and not infers:
        parser.error(f"{args.player} does not search inferred worlds (:infer)")
    if args.model_weight is not None and not hasattr(player, "model_weight") and not learned:
        parser.error(f"{args.player} plays no endgame search (a search player or a model)")
    if args.network_weight is not None and not (learned and infers):
        parser.error(f"{args.player} is no model searching inferred worlds (MODEL:infer)")
    if args.rollout_model_weight is not None and not (infers and search.opponent_model):
        parser.error(f"{args.player} plays no PIMC search with the opponent model (:infer)")
    if args.objective and search is None:
        parser.error(f"{args.player} plays no PIMC search (pimc:N, MODEL:infer)")
    if learned:
        changes: dict[str, Any] = {}
        if args.no_opponent_model:
            changes["opponent_model"] = False
        if args.model_weight is not None:
            changes["model_weight"] = args.model_weight
        if args.network_weight is not None:
            changes["network_weight"] = args.network_weight
        if args.rollout_model_weight is not None:
            share = args.rollout_model_weight
            changes |= {"rollout_model_weight": share, "misfit_rollout_model_weight": share}
        name = player.name
        player = LearnedPolicy(player.model, replace(player.search, **changes), name=name)
        if args.objective:
            player.pimc.objective = args.objective
        return player
    if args.no_opponent_model:
        search.opponent_model, search.rollout_model_weight, player.model_weight = False, 0.0, 0.0
    if args.model_weight is not None:
        player.model_weight = checked_model_weight(args.model_weight, False)
    if args.rollout_model_weight is not None:
        search.rollout_model_weight = checked_rollout_model_weight(args.rollout_model_weight, True)
    if args.objective:
        search.objective = args.objective
    return player


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("player")
    parser.add_argument("opponent")
    parser.add_argument("--table", choices=list(TABLES), default="2p")
    parser.add_argument("--mode", choices=["game", "round"], default="game")
    parser.add_argument("--deals", type=int, default=100)
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument("--chunk", type=int, default=50, help="deals between printed figures")
    parser.add_argument(
        "--no-opponent-model", action="store_true",
        help="the player's rollouts on inferred worlds play the other sides by the rollout "
        "policy, not the heuristic player, and its endgame search is minimax alone "
        "(opponent_model=False)",
    )  # fmt: skip
    parser.add_argument(
        "--model-weight", type=float,
        help="the weight of the opponent model in the player's endgame search, the rest "
        "minimax's (solve's model_weight; the player's own by default)",
    )  # fmt: skip
    parser.add_argument(
        "--network-weight", type=float,
        help="points a nat of the network's log-probability beside the PIMC search's values "
        "in a MODEL:infer player (SearchConfig.network_weight; the preset's by default)",
    )  # fmt: skip
    parser.add_argument(
        "--rollout-model-weight", type=float,
        help="the modelled rollouts' share of the player's PIMC values, the rest rollouts of the "
        "same worlds by the rollout policy (one share for every deal: SearchConfig's "
        "rollout_model_weight and misfit_rollout_model_weight; the player's own by default)",
    )  # fmt: skip
    parser.add_argument(
        "--objective", choices=OBJECTIVES,
        help="what the player's PIMC search scores a rollout's end by (PIMCPolicy's objective): "
        "the round's points, or the chance of winning the game from the totals",
    )  # fmt: skip
    args = parser.parse_args()
    torch.set_num_threads(1)
    player, opponent = make_policy(args.player), make_policy(args.opponent)
    try:
        player = adjusted(player, args, parser)
    except ValueError as error:
        parser.error(str(error))
    wins = draws = games = 0
    points = 0.0
    start = time.perf_counter()
    for first in range(0, args.deals, args.chunk):
        deals = min(args.chunk, args.deals - first)
        result = duplicate_match(
            player,
            opponent,
            table=args.table,
            deals=deals,
            mode=args.mode,
            seed=args.seed + first,
            names=(args.player, args.opponent),
        )
        wins, draws, games = wins + result.wins, draws + result.draws, games + result.games
        points += result.point_diff * result.games
        low, high = wilson_interval(wins + draws / 2, games)
        print(
            f"{args.player} vs {args.opponent} ({args.table}, {args.mode}s, seeds {args.seed}.."
            f"{args.seed + first + deals - 1}): {wins}W {draws}D {games - wins - draws}L of "
            f"{games}, {(wins + draws / 2) / games:.1%} [{low:.1%}, {high:.1%}], "
            f"{points / games:+.2f} points a {args.mode}, {time.perf_counter() - start:.0f} s",
            flush=True,
        )


if __name__ == "__main__":
    main()
