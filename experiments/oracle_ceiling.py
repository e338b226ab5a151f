"""What seeing the hidden cards is worth: players that cheat, a ceiling for the fair ones.

    python experiments/oracle_ceiling.py --lines oracle-hand:bastra_2p:infer oracle-hand:pimc:64 \\
        oracle-all:pimc placebo-hand:pimc:64 --deals 100 --json docs/oracle_ceiling.json

The shipping bar asks the 2p player to win 62% of full games against ``pimc:64:infer``. A fair
player's edge before the last deal comes from two things: what it infers of the other hand, and
how well it plays on what it knows. This script bounds the first. Each line is a 2p player against
``pimc:64:infer`` on the same duplicate deals (deal ``d`` is the game seed ``--seed + d`` in both
of its games, the seats swapped), full games to 100, the plain duplicate estimate:

- ``bastra_2p``, ``bastra_2p:infer``: the shipped player and the shipped player with PIMC on
  inferred worlds, as they are (the reference lines);
- ``oracle-hand:bastra_2p:infer``: ``bastra_2p:infer`` whose PIMC worlds hold the opponent's
  true hand (only the deck's order unknown): perfect inference, the same search;
- ``oracle-hand:pimc:64``: ``pimc:64:infer`` with the opponent's true hand in its 64 worlds;
- ``oracle-all:pimc``: PIMC on the one true world (the hand and the deck's order), the same
  rollouts: a player that sees every card to come;
- ``placebo-hand:pimc:64``: the control, the oracles' code with the other hand dealt at random
  from the unseen cards (uniform worlds, as ``pimc:64`` draws them, but with the opponent model in
  the rollouts and the endgame, as ``pimc:64:infer``).

The oracles read the true state from the env (``snapshot()``), which is why they live here and
not among the players: they cheat, and exist only to measure how far any fair player could get
with these searches. The last deal is searched exactly by every line already (the deck is empty,
the other hand is every unseen card), so the oracles differ only before it. Games run on every
core (``--workers``), one torch thread each; the figures are the same for any worker count.
"""

from __future__ import annotations

import argparse
import importlib
import json
import multiprocessing as mp
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import bastra_env  # noqa: E402
from agents import LearnedPolicy, PIMCPolicy, make_policy  # noqa: E402
from agents.evaluation.matches import play_game, wilson_interval  # noqa: E402
from agents.search import world_kernels as S  # noqa: E402
from agents.search.endgame_kernels import POINTS_ONLY  # noqa: E402
from agents.search.positions import decision_seed, legal_moves, position_of  # noqa: E402
from bastra_env import compiled_rules as K  # noqa: E402
from bastra_env.cards import parse_card  # noqa: E402

OPPONENT = "pimc:64:infer"
LINES = (
    "bastra_2p",
    "bastra_2p:infer",
    "oracle-hand:bastra_2p:infer",
    "oracle-hand:pimc:64",
    "oracle-all:pimc",
    "placebo-hand:pimc:64",
)


def _mask(names: list[str]) -> int:
    mask = 0
    for name in names:
        mask |= 1 << parse_card(name)
    return mask


class OraclePIMC(PIMCPolicy):
    """PIMC whose worlds hold the other seat's true hand (``see_deck``: and the deck's true
    order, one world; ``placebo``: a hand drawn at random instead, the control: the same code
    path must then play as plain PIMC does). 2p only; ``act`` reads the truth from the env it
    is given (``env.snapshot()``)."""

    def __init__(
        self, budget: int, seed: int, see_deck: bool, placebo: bool = False, **kwargs: Any
    ) -> None:
        super().__init__(budget, seed=seed, infer=True, **kwargs)
        self.see_deck = see_deck
        self.placebo = placebo
        self.env: Any = None
        self.name = "oracle-all:pimc" if see_deck else f"oracle-hand:pimc:{budget}"

    def act(self, observation: Any, env: Any = None) -> int:
        self.env = env
        return super().act(observation)

    def _true_worlds(self, obs: np.ndarray, position: np.ndarray, count: int) -> np.ndarray:
        snap = self.env.snapshot()
        seats = list(snap["hands"])
        if len(seats) != 2:
            raise ValueError("the oracles play the 2p table only")
        mover = seats.index(snap["current"])
        other = _mask(snap["hands"][seats[1 - mover]])
        deck = np.array([parse_card(c) for c in snap["deck"]], dtype=np.int64)
        pos = int(position[K.DECK_POS])
        if deck.shape[0] != K.NUM_CARDS - pos:
            raise AssertionError(f"the snapshot's deck holds {deck.shape[0]} cards, the "
                                 f"observation says {K.NUM_CARDS - pos}")  # fmt: skip
        rng = decision_seed(self.seed, obs, uniform=True)
        worlds = np.empty((count, position.shape[0]), dtype=np.int64)
        held = np.array([c for c in range(K.NUM_CARDS) if other >> c & 1], dtype=np.int64)
        for w in range(count):
            worlds[w] = position
            if self.placebo:  # the unseen cards dealt at random, through the same path
                pool = np.concatenate([held, deck])
                S._shuffle(pool, rng)
                hand, order = pool[: len(held)], pool[len(held) :]
                worlds[w, K.HANDS + 1] = int(np.bitwise_or.reduce(np.left_shift(1, hand)))
            else:
                worlds[w, K.HANDS + 1] = other
                order = deck.copy()
                if not self.see_deck:
                    S._shuffle(order, rng)
            worlds[w, K.DECK + pos : K.DECK + K.NUM_CARDS] = order
        return worlds

    def action_values(
        self, observation: Any, rollout_model_weight: float | None = None
    ) -> dict[int, float]:
        obs = np.asarray(observation["observation"])
        position, rules, _, _ = position_of(obs)
        actions = legal_moves(position, rules)
        n = len(actions)
        share = self.rollout_model_weight if rollout_model_weight is None else rollout_model_weight
        count = 1 if self.see_deck else self.budget
        modelled, plain = np.zeros(n), np.zeros(n)
        equity = POINTS_ONLY
        self.value_worlds(position, rules, self._true_worlds(obs, position, count), share,
                          equity, modelled, plain)  # fmt: skip
        values = (share * modelled + (1 - share) * plain) / count
        return dict(zip(actions.tolist(), values.tolist(), strict=True))


class OracleModel:
    """A ``MODEL:infer`` player whose PIMC is an ``OraclePIMC`` with the same settings."""

    def __init__(self, player: LearnedPolicy) -> None:
        assert player.pimc is not None
        self.player = player
        old = player.pimc
        oracle = OraclePIMC(old.budget, seed=old.seed, see_deck=False,
                            opponent_model=old.opponent_model)  # fmt: skip
        oracle.endgame = old.endgame
        player.pimc = oracle
        self.oracle = oracle
        self.name = "oracle-hand:" + player.name

    def act(self, observation: Any, env: Any = None) -> int:
        self.oracle.env = env
        return int(self.player.act(observation))


def make_line(name: str, seed: int) -> Any:
    if name == "oracle-all:pimc":
        return OraclePIMC(1, seed=seed, see_deck=True)
    if name.startswith("placebo-hand:pimc:"):
        budget = int(name.rsplit(":", 1)[1])
        player = OraclePIMC(budget, seed=seed, see_deck=False, placebo=True)
        player.name = name
        return player
    if name.startswith("oracle-hand:pimc:"):
        return OraclePIMC(int(name.rsplit(":", 1)[1]), seed=seed, see_deck=False)
    if name.startswith("oracle-hand:"):
        return OracleModel(make_policy(name.removeprefix("oracle-hand:"), seed=seed))
    return make_policy(name, seed=seed)


_WORKER: dict[str, Any] = {}


def _init(
    line: str, seed: int, factory: tuple[str, str, tuple[Any, ...]] | None, opponent: str
) -> None:
    torch.set_num_threads(1)
    _WORKER["env"] = bastra_env.env()
    if factory is None:
        _WORKER["a"] = make_line(line, seed)
    else:
        module, name, extra = factory
        _WORKER["a"] = getattr(importlib.import_module(module), name)(line, seed, *extra)
    _WORKER["b"] = make_policy(opponent, seed=seed + 1)


def _deal(game_seed: int) -> tuple[int, float, float]:
    """(deal seed, A's wins in the two games (a draw half), A's mean point difference)."""
    env, a, b = _WORKER["env"], _WORKER["a"], _WORKER["b"]
    wins = diff = 0.0
    for seats, mine in (((a, b), 0), ((b, a), 1)):
        scores = play_game(env, seats, game_seed)
        margin = scores[mine] - scores[1 - mine]
        wins += 1.0 if margin > 0 else 0.5 if margin == 0 else 0.0
        diff += margin / 2
    return game_seed, wins, diff


def run_line(
    line: str,
    deals: int,
    seed: int,
    workers: int,
    factory: tuple[str, str, tuple[Any, ...]] | None = None,
    opponent: str = OPPONENT,
) -> dict[str, Any]:
    """``line`` against ``opponent`` on ``deals`` duplicate deals of full games; the player is
    ``make_line(line, seed)``, or ``factory`` ``(module, function, extra arguments)``'s
    ``function(line, seed, *extra)`` (each worker imports the module)."""
    start = time.perf_counter()
    seeds = [seed + d for d in range(deals)]
    per_deal: dict[int, tuple[float, float]] = {}
    with mp.get_context("spawn").Pool(workers, _init, (line, seed, factory, opponent)) as pool:
        for game_seed, wins, diff in pool.imap_unordered(_deal, seeds):
            per_deal[game_seed] = (wins, diff)
            if len(per_deal) % 25 == 0:
                w = sum(v[0] for v in per_deal.values()) / (2 * len(per_deal))
                print(f"  {line}: {len(per_deal)}/{deals} deals, won {w:.1%}", flush=True)
    wins = np.array([per_deal[s][0] for s in seeds])
    diffs = np.array([per_deal[s][1] for s in seeds])
    low, high = wilson_interval(float(wins.sum()), 2 * deals)
    return {
        "player": line,
        "opponent": opponent,
        "games": 2 * deals,
        "win_rate": float(wins.sum() / (2 * deals)),
        "win_ci": [low, high],
        "points": float(diffs.mean()),
        "points_half_width": float(1.96 * diffs.std(ddof=1) / np.sqrt(deals)),
        "per_deal_wins": wins.tolist(),
        "seconds": time.perf_counter() - start,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--lines", nargs="+", default=list(LINES),
        help=f"players: {', '.join(LINES)}, or any name make_policy takes",
    )  # fmt: skip
    parser.add_argument("--opponent", default=OPPONENT, help="a name make_policy takes")
    parser.add_argument("--deals", type=int, default=300)
    parser.add_argument("--seed", type=int, default=3326)
    parser.add_argument("--workers", type=int, default=max(1, mp.cpu_count()))
    parser.add_argument("--json", type=Path, help="write the lines here (merged with its lines)")
    args = parser.parse_args()
    results: dict[str, Any] = {}
    if args.json and args.json.exists():
        results = json.loads(args.json.read_text())
    for line in args.lines:
        row = run_line(line, args.deals, args.seed, args.workers, opponent=args.opponent)
        print(f"{line} vs {args.opponent}: {row['games']} games, won {row['win_rate']:.1%} "
              f"[{row['win_ci'][0]:.1%}, {row['win_ci'][1]:.1%}], "
              f"{row['points']:+.2f} ± {row['points_half_width']:.2f} points a game, "
              f"{row['seconds']:.0f} s", flush=True)  # fmt: skip
        results.setdefault("meta", {}).update(
            {"seed": args.seed, "deals": args.deals, "mode": "game", "table": "2p",
             "opponent": args.opponent,
             "date": time.strftime("%Y-%m-%d")})  # fmt: skip
        results.setdefault("lines", {})[line] = row
        if args.json:
            tmp = args.json.with_suffix(".tmp")
            tmp.write_text(json.dumps(results, indent=1) + "\n")
            tmp.replace(args.json)


if __name__ == "__main__":
    main()
