"""Random full games through the rules engine: plays per second on one core.

    python benchmarks/engine_speed.py [--games N] [--profile]

Each play lists the legal moves of the seat to move, picks one uniformly, and applies it: what a
rollout-based agent or an environment step costs at the engine level. ``--profile`` adds a cProfile
table of where the time goes.
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import random
import time

from bastra_env import Game, Rules

TABLES = {
    "2p": Rules(num_players=2),
    "3p": Rules(num_players=3),
    "4p": Rules(num_players=4),
    "4p teams": Rules(num_players=4, teams=True),
}


def play_random_games(rules: Rules, games: int, seed: int = 0) -> tuple[int, int]:
    """Play ``games`` random games; returns (plays, rounds)."""
    rng = random.Random(seed)
    pick = rng.random
    plays = rounds = 0
    for g in range(games):
        game = Game(rules, seed=seed * 1_000_003 + g)
        while not game.done:
            moves = game.legal_moves()
            card, capture = moves[int(pick() * len(moves))]
            game.apply(card, capture)
            plays += 1
        rounds += game.round
    return plays, rounds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=300, help="games per table size")
    parser.add_argument("--repeats", type=int, default=5, help="timed repeats; the best is shown")
    parser.add_argument("--profile", action="store_true", help="print a cProfile of 2p play")
    args = parser.parse_args()

    for rules in TABLES.values():
        play_random_games(rules, 50, seed=99)  # warm the capture caches and the interpreter
    best = dict.fromkeys(TABLES, float("inf"))
    counts: dict[str, tuple[int, int]] = {}
    for _ in range(args.repeats):  # interleaved, so a noisy moment hits every table alike
        for name, rules in TABLES.items():
            start = time.perf_counter()
            counts[name] = play_random_games(rules, args.games)
            best[name] = min(best[name], time.perf_counter() - start)
    print(f"{'table':<10} {'games':>6} {'plays':>9} {'plays/s':>11} {'games/s':>9}", end="")
    print(f" {'rounds/game':>12}")
    for name, seconds in best.items():
        plays, rounds = counts[name]
        print(
            f"{name:<10} {args.games:>6} {plays:>9} {plays / seconds:>11,.0f} "
            f"{args.games / seconds:>9,.1f} {rounds / args.games:>12.2f}"
        )
    if args.profile:
        profiler = cProfile.Profile()
        profiler.runcall(play_random_games, TABLES["2p"], args.games)
        pstats.Stats(profiler).sort_stats("tottime").print_stats(10)


if __name__ == "__main__":
    main()
