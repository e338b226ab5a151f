"""A teacher worth learning from? Search experts against the network they would teach, each with
its time a move.

    python experiments/teacher_table.py [--student bastra_2p:network] [--deals 150]
        [--experts bastra_2p pimc:64 ...] [--json docs/teacher_table_2p.json]

Each expert (any name ``make_policy`` takes: the packaged model with its endgame searches, PIMC
and IS-MCTS with or without inference, a time budget, the network as prior) plays single rounds
against the student (the network alone, by default the packaged 2p one) on ``--deals``
duplicate deals (seed 2026, the same deals for every expert), variance-reduced: the expert's
points a round above the student with a 95% interval. Its time a move is measured apart, one
decision at a time on one thread, over the same ``--positions`` positions (seat 0's decisions in
heuristic self-play rounds, every phase of the round). An expert the student should learn from
is clearly above it (the issue's bar: +1 point a round) within about 30 ms a move. Lines already
in ``--json`` are kept.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import bastra_env  # noqa: E402
from agents import make_policy  # noqa: E402
from agents.evaluation.matches import duplicate_match  # noqa: E402

EXPERTS = [
    "heuristic", "bastra_2p", "bastra_2p:last-deal:points", "bastra_2p:infer",
    "pimc:64", "pimc:64:infer", "pimc:128:infer", "pimc:30ms:infer", "pimc:64:infer:bastra_2p",
    "ismcts:400", "ismcts:30ms:bastra_2p",
]  # fmt: skip
"""The experts of the table, cheapest first within each family."""


def positions(count: int, seed: int) -> list[Any]:
    """Seat 0's observations in heuristic self-play rounds (2p), every phase of the round."""
    heuristic = make_policy("heuristic")
    env = bastra_env.env(num_players=2, max_rounds=1)
    found: list[Any] = []
    game = 0
    while len(found) < count:
        env.reset(seed=seed + game)
        game += 1
        for agent in env.agent_iter():
            observation, _, terminated, truncated, _ = env.last()
            if terminated or truncated:
                env.step(None)
                continue
            if agent == "player_0":
                found.append(observation)
            env.step(heuristic.act(observation))
    return found[:count]


def time_a_move(spec: str, observations: list[Any]) -> float:
    """Mean seconds a decision of ``spec`` over ``observations``, one at a time."""
    player = make_policy(spec, seed=0)
    player.act(observations[0])  # load and compile
    started = time.perf_counter()
    for observation in observations:
        player.act(observation)
    return (time.perf_counter() - started) / len(observations)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--student", default="bastra_2p:network")
    parser.add_argument("--experts", nargs="+", default=EXPERTS)
    parser.add_argument("--deals", type=int, default=150)
    parser.add_argument("--positions", type=int, default=200)
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument("--json", type=Path, default=ROOT / "docs" / "teacher_table_2p.json")
    args = parser.parse_args()
    torch.set_num_threads(1)
    table = json.loads(args.json.read_text()) if args.json.is_file() else {
        "student": args.student, "deals": args.deals, "seed": args.seed, "mode": "round",
        "positions": args.positions, "lines": []}  # fmt: skip
    done = {line["expert"] for line in table["lines"]}
    observations = positions(args.positions, args.seed)
    for spec in args.experts:
        if spec in done:
            continue
        started = time.perf_counter()
        result = duplicate_match(
            spec,
            args.student,
            table="2p",
            deals=args.deals,
            mode="round",
            seed=args.seed,
            num_threads=1,
            variance_reduction=True,
        )
        line = result.to_json(per_deal=False)
        line |= {"expert": spec, "match_seconds": time.perf_counter() - started,
                 "seconds_a_move": time_a_move(spec, observations)}  # fmt: skip
        table["lines"].append(line)
        args.json.write_text(json.dumps(table, indent=1) + "\n")
        print(f"{spec:<28} {line['point_diff']:+.2f} +/- {line['point_diff_ci']:.2f} points a "
              f"round (plain {line['raw_point_diff']:+.2f} +/- {line['raw_point_diff_ci']:.2f}), "
              f"{1000 * line['seconds_a_move']:.1f} ms a move", flush=True)  # fmt: skip
    best = max(table["lines"], key=lambda line: line["point_diff"])
    print(
        f"best: {best['expert']} {best['point_diff']:+.2f} points a round, "
        f"{1000 * best['seconds_a_move']:.1f} ms a move"
    )


if __name__ == "__main__":
    main()
