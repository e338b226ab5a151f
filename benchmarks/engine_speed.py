"""Random full games through the rules engine: plays per second on one core, side by side.

    python benchmarks/engine_speed.py [--games N] [--repeats R] [--profile]

Three engines play the same kind of games (every play lists the legal moves of the seat to move,
picks one uniformly and applies it: what a rollout or an env step costs at the engine level):

- ``kernels``: the compiled rules (``bastra_env.compiled_rules``) in one compiled loop;
- ``Game``: the engine's Python face (``bastra_env.Game``, a kernel call per play);
- ``reference``: the plain Python rules of ``tests/reference.py`` (the anchor: the engine as it
  was before the kernels).

Timings are the best of interleaved repeats; ``--profile`` adds a cProfile of ``Game`` play.
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import random
import sys
import time
from pathlib import Path

import numpy as np
from numba import njit

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bastra_env import Game, Rules  # noqa: E402
from bastra_env import compiled_rules as K  # noqa: E402
from benchmarks import pin_to_one_core  # noqa: E402
from tests import reference  # noqa: E402

TABLES = {
    "2p": Rules(num_players=2),
    "3p": Rules(num_players=3),
    "4p": Rules(num_players=4),
    "4p teams": Rules(num_players=4, teams=True),
}


@njit(cache=True)
def kernel_games(rules: np.ndarray, games: int, seed: int) -> tuple:
    """``games`` random games in compiled code; returns (plays, rounds)."""
    state = np.zeros(K.STATE_SIZE, dtype=np.int64)
    work = np.empty(K.CAPTURE_WORK + 64, dtype=np.int64)
    caps = np.empty(64, dtype=np.int64)
    cards = np.empty(256, dtype=np.int64)
    masks = np.empty(256, dtype=np.int64)
    empty = np.empty(0, dtype=np.int64)
    np.random.seed(seed)
    plays = 0
    rounds = 0
    for g in range(games):
        K.new_game(state, rules, seed * 1_000_003 + g, empty)
        while not state[K.DONE]:
            hand = state[K.HANDS + state[K.CURRENT]]
            n = 0
            while hand:
                card = K.lowest_card(hand)
                hand &= hand - 1
                found = K.card_captures(card, state[K.BOARD], caps, 64, work)
                if found == 0:
                    cards[n] = card
                    masks[n] = 0
                    n += 1
                elif rules[K.R_AUTO]:
                    cards[n] = card
                    masks[n] = caps[0]
                    n += 1
                else:
                    for k in range(found):
                        cards[n] = card
                        masks[n] = caps[k]
                        n += 1
            pick = np.random.randint(0, n)
            K.apply_move(state, rules, cards[pick], masks[pick])
            plays += 1
        rounds += state[K.ROUND]
    return plays, rounds


def python_games(make, rules: Rules, games: int, seed: int = 0) -> tuple[int, int]:
    """``games`` random games through a Python engine class; returns (plays, rounds)."""
    rng = random.Random(seed)
    pick = rng.random
    plays = rounds = 0
    for g in range(games):
        game = make(rules, seed=seed * 1_000_003 + g)
        while not game.done:
            moves = game.legal_moves()
            card, capture = moves[int(pick() * len(moves))]
            game.apply(card, capture)
            plays += 1
        rounds += game.round
    return plays, rounds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=200, help="games per table and engine")
    parser.add_argument("--repeats", type=int, default=5, help="timed repeats; the best is shown")
    parser.add_argument("--profile", action="store_true", help="print a cProfile of Game play")
    args = parser.parse_args()
    pin_to_one_core()

    engines = {
        "kernels": lambda rules, games: kernel_games(K.rules_array(rules), games, 0),
        "Game": lambda rules, games: python_games(Game, rules, games),
        "reference": lambda rules, games: python_games(reference.Game, rules, games),
    }
    for rules in TABLES.values():
        for run in engines.values():
            run(rules, 5)  # compile / warm up
    best = {(t, e): float("inf") for t in TABLES for e in engines}
    counts: dict[tuple[str, str], tuple[int, int]] = {}
    for _ in range(args.repeats):  # interleaved, so a noisy moment hits every engine alike
        for table, rules in TABLES.items():
            for engine, run in engines.items():
                start = time.perf_counter()
                counts[table, engine] = run(rules, args.games)
                best[table, engine] = min(best[table, engine], time.perf_counter() - start)
    print(f"{'table':<10} {'engine':<10} {'plays':>9} {'plays/s':>12} {'vs reference':>13}")
    for table in TABLES:
        anchor = counts[table, "reference"][0] / best[table, "reference"]
        for engine in engines:
            plays, _rounds = counts[table, engine]
            rate = plays / best[table, engine]
            print(f"{table:<10} {engine:<10} {plays:>9} {rate:>12,.0f} {rate / anchor:>12.1f}x")
    if args.profile:
        profiler = cProfile.Profile()
        profiler.runcall(python_games, Game, TABLES["2p"], args.games)
        pstats.Stats(profiler).sort_stats("tottime").print_stats(10)


if __name__ == "__main__":
    main()
