"""Search players' speed: decisions a second and time a decision, at several budgets.

    python benchmarks/search_speed.py [--positions 200] [--table 2p|4p_teams]

The positions are those a game between heuristic players passes through (every decision with
more than one legal action, the deck not yet empty, so no endgame search shortcuts them), the
same for every player. Each player decides every position on one core; printed: decisions a
second, mean and 95th-percentile milliseconds a decision, and for the iteration budgets the
rollouts (PIMC: determinizations x legal actions) or iterations a second. The anchors are the
one-ply heuristic and the network alone, deciding the same positions one at a time.

In 2p it then times the packaged model with the two-deal search (``endgame_deals=2``) on
positions of the last-but-one deal (8 cards in the deck), beside the same model searching the last
deal only (which plays the network there) and the two-deal search maximising the round's points
rather than the game's chance (``objective="points"``), on deals inferred from the deal's plays
(``infer=True``), and as ``bastra_2p:infer`` plays it (inferred deals, and the search against the
opponent model beside minimax): mean, 99th percentile and the slowest move.

Last, on both tables, the endgame search of the last deal (the deck empty; in the team game from
three cards in hand), as the models with inference play it: minimax alone (``model_weight=0``)
beside minimax and the search against the opponent model (``MODEL_WEIGHT``, as ``MODEL:infer``
and ``pimc:N:infer`` play it).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import bastra_env  # noqa: E402
from agents import NETWORK_ALONE, HeuristicPolicy, make_policy  # noqa: E402
from agents.search.endgame import MODEL_WEIGHT, solve  # noqa: E402
from bastra_env.rules import TABLES  # noqa: E402
from benchmarks import pin_to_one_core  # noqa: E402

MODELS = {"2p": "bastra_2p", "4p_teams": "bastra_4p_teams"}


def sample_positions(table: str, count: int, seed: int, deck_left: int | None = None) -> list[dict]:
    """Decisions with more than one legal action of heuristic games from ``seed`` on: with cards
    in the deck, or with exactly ``deck_left`` there."""
    env = bastra_env.raw_env(**TABLES[table])
    heuristic = HeuristicPolicy()
    found: list[dict] = []
    game_seed = seed
    env.reset(seed=game_seed)
    while len(found) < count:
        if env.game.done:
            game_seed += 1
            env.reset(seed=game_seed)
        observation = env.observe(env.agent_selection)
        game = env.game
        left = len(game.deck) - game.deck_pos
        wanted = left > 0 if deck_left is None else left == deck_left
        if wanted and observation["action_mask"].sum() > 1:
            found.append({k: v.copy() for k, v in observation.items()})
        env.step(heuristic.act(observation))
    return found


def decision_times(player, positions: list[dict]) -> list[float]:
    """Seconds ``player.act`` takes on each position, one at a time, after a warm-up call."""
    player.act(positions[0])  # compile / warm up
    times = []
    for observation in positions:
        start = time.perf_counter()
        player.act(observation)
        times.append(time.perf_counter() - start)
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--positions", type=int, default=200)
    parser.add_argument("--table", choices=list(TABLES), default="2p")
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument(
        "--players", nargs="+",
        default=["pimc:16", "pimc:64", "pimc:256", "ismcts:100", "ismcts:400", "ismcts:1600",
                 "pimc:50ms", "ismcts:50ms"],
    )  # fmt: skip
    args = parser.parse_args()
    pin_to_one_core()
    torch.set_num_threads(1)
    positions = sample_positions(args.table, args.positions, args.seed)
    legal = np.mean([p["action_mask"].sum() for p in positions])
    print(f"{len(positions)} positions of {args.table} games (deck not empty), "
          f"{legal:.1f} legal actions on average; one core")  # fmt: skip
    network = make_policy(MODELS[args.table] + NETWORK_ALONE)
    players = [("heuristic (anchor)", HeuristicPolicy()), ("network alone (anchor)", network)]
    players += [(spec, make_policy(spec, seed=1)) for spec in args.players]
    for spec, player in players:
        times = decision_times(player, positions)
        total = sum(times)
        extra = ""
        budget = getattr(player, "budget", None)
        if budget and not getattr(player, "milliseconds", True):
            units = budget * legal if spec.startswith("pimc") else budget
            kind = "rollouts" if spec.startswith("pimc") else "iterations"
            extra = f"   {units * len(positions) / total:>10,.0f} {kind}/s"
        print(f"{spec:>24}: {len(positions) / total:9.1f} decisions/s   mean "
              f"{1000 * total / len(positions):7.2f} ms   p95 "
              f"{1000 * float(np.percentile(times, 95)):7.2f} ms   max "
              f"{1000 * max(times):7.2f} ms{extra}")  # fmt: skip
    if args.table == "2p":
        two_deal(args.positions, args.seed)
    last_deal(args.table, args.positions, args.seed)


def two_deal(count: int, seed: int) -> None:
    positions = sample_positions("2p", count, seed, deck_left=8)
    print(f"{len(positions)} positions of the last-but-one deal (8 cards in the deck)")
    variants = (
        ("bastra_2p, last deal (anchor)", "bastra_2p:last-deal"),
        ("bastra_2p, two deals", "bastra_2p"),
        ("two deals, round's points", "bastra_2p:points"),
        ("bastra_2p:infer (and the model)", "bastra_2p:infer"),
    )
    for name, spec in variants:
        model = make_policy(spec)
        times = [1000 * t for t in decision_times(model, positions)]
        print(f"{name:>30}: mean {np.mean(times):7.2f} ms   p99 "
              f"{float(np.percentile(times, 99)):7.2f} ms   max {max(times):7.2f} ms")  # fmt: skip


def last_deal(table: str, count: int, seed: int) -> None:
    searched = [
        p for p in sample_positions(table, 2 * count, seed, deck_left=0) if solve(p) is not None
    ][:count]
    print(f"{len(searched)} endgame positions of {table} (deck empty, the search applies)")
    for name, weight in (("minimax", 0.0), (f"model weight {MODEL_WEIGHT}", MODEL_WEIGHT)):
        solve(searched[0], infer=True, objective="game", model_weight=weight)  # compile / load
        times = []
        for observation in searched:
            start = time.perf_counter()
            solve(observation, infer=True, objective="game", model_weight=weight)
            times.append(1000 * (time.perf_counter() - start))
        print(f"{name:>30}: mean {np.mean(times):7.2f} ms   p99 "
              f"{float(np.percentile(times, 99)):7.2f} ms   max {max(times):7.2f} ms")  # fmt: skip


if __name__ == "__main__":
    main()
