"""The compiled rules against the plain Python reference on many random rounds.

    python benchmarks/reference_check.py [--rounds 100000] [--seed 0]

Plays random rounds through ``bastra_env.Game`` (the kernels) and ``tests/reference.py`` side by
side, in every table size and rule variant in turn. At every play it compares the legal moves, the
board and the seat to move; at every round's end the whole state (hands, piles, deck, scores,
dealer, bastras, ...) and the scoring breakdown. Prints rounds, plays and mismatches per variant
(the tests run the same comparison on a CI-sized sample).
"""

from __future__ import annotations

import argparse
import dataclasses
import random
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bastra_env import Game, Rules  # noqa: E402
from tests import reference  # noqa: E402

VARIANTS = {
    "2p": Rules(num_players=2),
    "3p": Rules(num_players=3),
    "4p": Rules(num_players=4),
    "4p teams": Rules(num_players=4, teams=True),
    "2p auto capture": Rules(capture="auto"),
    "4p teams auto": Rules(num_players=4, teams=True, capture="auto"),
    "2p no last-play bastra, draw, 30": Rules(
        last_play_bastra=False, tie_break="draw", target_score=30
    ),
    "3p scoring 7/20/5": Rules(
        num_players=3, bastra_points=7, jack_bastra_points=20, most_cards_points=5
    ),
}


def state(game) -> tuple:
    return (
        list(game.hands),
        game.board,
        list(game.captured),
        list(game.bastras),
        list(game.jack_bastras),
        tuple(game.deck),
        game.deck_pos,
        list(game.scores),
        game.current,
        game.dealer,
        game.round,
        game.plays,
        game.last_capturer,
        game.last_move,
        game.done,
        game.winner,
    )


def check(rules: Rules, rounds: int, rng: random.Random) -> tuple[int, int, int]:
    """(rounds, plays, mismatches) of random games until ``rounds`` rounds were played."""
    done_rounds = plays = mismatches = 0
    while done_rounds < rounds:
        seed = rng.getrandbits(63)
        fast, slow = Game(rules, seed=seed), reference.Game(rules, seed=seed)
        while not slow.done and done_rounds < rounds:
            moves = slow.legal_moves()
            if fast.legal_moves() != moves:
                mismatches += 1
                break
            move = moves[int(rng.random() * len(moves))]
            fast.apply(*move)
            slow.apply(*move)
            plays += 1
            if fast.board != slow.board or fast.current != slow.current:
                mismatches += 1
                break
            if slow.plays == 0 or slow.done:  # a round ended: everything, and its scoring
                done_rounds += 1
                same = state(fast) == state(slow) and dataclasses.astuple(
                    fast.results[-1]
                ) == dataclasses.astuple(slow.results[-1])
                if not same:
                    mismatches += 1
                    break
    return done_rounds, plays, mismatches


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=100_000, help="rounds in all")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    per_variant = -(-args.rounds // len(VARIANTS))
    print(f"{'variant':<34} {'rounds':>8} {'plays':>10} {'mismatches':>11} {'seconds':>8}")
    totals = [0, 0, 0]
    for name, rules in VARIANTS.items():
        start = time.perf_counter()
        rounds, plays, bad = check(rules, per_variant, rng)
        print(f"{name:<34} {rounds:>8,} {plays:>10,} {bad:>11} {time.perf_counter() - start:>8.1f}")
        for i, value in enumerate((rounds, plays, bad)):
            totals[i] += value
    print(f"{'all':<34} {totals[0]:>8,} {totals[1]:>10,} {totals[2]:>11}")


if __name__ == "__main__":
    main()
