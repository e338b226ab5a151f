"""Bastra in OpenSpiel beside an OpenSpiel C++ card game of similar length, in the same run.

    python benchmarks/openspiel_speed.py [--seconds 3] [--repeats 3]

What a search over OpenSpiel states does at every node: ``state.clone()`` then
``state.apply_action(a)``, with ``a`` a random chance outcome or legal action, to the end of the
game, then a new game. Counted: nodes (chance and player) per second, best of interleaved
repeats. Games: ``python_bastra`` (``bastra_env.openspiel``, Python over the compiled kernels) with
2 players and the team game, each to 100 and one round (``max_rounds=1``, 48 plays and about 52
deals); OpenSpiel's C++ ``hearts`` (52 deals and 52 plays, the nearest built-in card game in
length) and its Python ``python_block_dominoes``. Needs ``pip install -e ".[openspiel]"``.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def nodes_per_second(game: object, seconds: float, seed: int) -> tuple[float, float]:
    """(nodes/s, nodes a game) of clone-and-apply random play for about ``seconds``."""
    rng = np.random.default_rng(seed)
    nodes = games = 0
    state = game.new_initial_state()  # type: ignore[attr-defined]
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        if state.is_terminal():
            state = game.new_initial_state()  # type: ignore[attr-defined]
            games += 1
        if state.is_chance_node():
            outcomes, probs = zip(*state.chance_outcomes(), strict=True)
            action = outcomes[rng.choice(len(outcomes), p=probs)]
        else:
            legal = state.legal_actions()
            action = legal[rng.integers(len(legal))]
        state = state.clone()
        state.apply_action(action)
        nodes += 1
    elapsed = time.perf_counter() - start
    return nodes / elapsed, nodes / max(games, 1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=3.0)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    import pyspiel
    from open_spiel.python.games import block_dominoes  # noqa: F401  (registers it)

    import bastra_env.openspiel  # noqa: F401  (registers python_bastra)

    games = {
        "python_bastra 2p, to 100": pyspiel.load_game("python_bastra"),
        "python_bastra 2p, one round": pyspiel.load_game("python_bastra", {"max_rounds": 1}),
        "python_bastra teams, one round": pyspiel.load_game(
            "python_bastra", {"num_players": 4, "teams": True, "max_rounds": 1}
        ),
        "hearts (C++)": pyspiel.load_game("hearts"),
        "python_block_dominoes": pyspiel.load_game("python_block_dominoes"),
    }
    best = dict.fromkeys(games, 0.0)
    length = dict.fromkeys(games, 0.0)
    for game in games.values():
        nodes_per_second(game, 0.5, 0)  # warm up (the kernels load from their cache)
    for repeat in range(args.repeats):
        for name, game in games.items():
            rate, per_game = nodes_per_second(game, args.seconds, repeat)
            best[name] = max(best[name], rate)
            length[name] = max(length[name], per_game)
    anchor = best["hearts (C++)"]
    print(f"\n{'game':<32} {'nodes/s':>10} {'vs hearts':>10} {'nodes a game':>13}")
    for name in games:
        ratio = best[name] / anchor
        print(f"{name:<32} {best[name]:>10,.0f} {ratio:>9.2f}x {length[name]:>13,.0f}")
    print("(a node: state.clone() and state.apply_action(a), a random outcome or legal action)")


if __name__ == "__main__":
    main()
