"""Honest evaluation: duplicate deals, Wilson intervals, round-robin ratings, training curves.

    python -m agents.evaluate A B [--table 2p|4p_teams] [--deals N] [--mode game|round] [--json F]
    python -m agents.evaluate A B C ...            # round-robin: every pair, then ratings
    python -m agents.evaluate --curves RUN_DIR     # eval.csv of a training run -> curves.png

A policy is a baseline name (random, greedy, heuristic) or a checkpoint path. In the team game a
side may be two different policies joined by ``+`` (``runs/x/final.pt+greedy``: the first plays
seats 0/2's first seat, the second the partner seat). Every deal is played twice with the same
cards, the sides swapping seats, so the luck of the deal cancels out.
"""

from __future__ import annotations

import argparse
import csv
import json
import math
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import torch

from agents.evaluation.replay import Move, build_record, explanation_of, safe_name, write_record
from bastra_env import Rules
from bastra_env.rules import TABLES
from bastra_env.vector import VectorEnv, batch_actor

if TYPE_CHECKING:
    from pettingzoo import AECEnv



def wilson_interval(successes: float, trials: int, z: float = 1.96) -> tuple[float, float]:
    """95% Wilson score interval of a proportion (draws may count as half successes)."""
    if trials <= 0:
        return (0.0, 1.0)
    p = successes / trials
    centre = p + z * z / (2 * trials)
    spread = z * math.sqrt(p * (1 - p) / trials + z * z / (4 * trials * trials))
    denominator = 1 + z * z / trials
    low = 0.0 if successes <= 0 else (centre - spread) / denominator
    high = 1.0 if successes >= trials else (centre + spread) / denominator
    return (max(0.0, low), min(1.0, high))


@dataclass
class MatchResult:
    a: str
    b: str
    table: str
    mode: str
    games: int
    wins: int
    draws: int
    losses: int
    win_rate: float
    """(wins + draws / 2) / games, for side A."""
    ci_low: float
    ci_high: float
    point_diff: float
    """Mean of A's final score minus B's, per game."""
    point_diff_ci: float = float("nan")
    """Half-width of the 95% interval of ``point_diff`` (over deals: each deal's two games
    averaged, as the luck of the deal cancels within them)."""

    def line(self) -> str:
        return (
            f"{self.a} vs {self.b} ({self.table}, {self.mode}s): {self.win_rate:.1%} "
            f"[95% CI {self.ci_low:.1%}-{self.ci_high:.1%}] over {self.games} games "
            f"({self.wins}W {self.draws}D {self.losses}L), mean point difference "
            f"{self.point_diff:+.2f}"
        )


def side_policies(spec: Any, teams: bool) -> tuple[Any, Any]:
    """A policy, or a (first seat, partner) pair, as the two seats of a side."""
    if isinstance(spec, tuple):
        if len(spec) != 2 or not teams:
            raise ValueError("a side of two policies needs the team game")
        return spec
    return (spec, spec)


def play_game(env: AECEnv, seat_policies: Sequence[Any], seed: int) -> list[int]:
    """One game (or round) through the AEC env with ``seat_policies[seat]``, one move at a time;
    returns each side's final score. ``duplicate_match`` plays its games in batch instead."""
    env.reset(seed=seed)
    raw = env.unwrapped
    for agent in env.agent_iter():
        observation, _, termination, truncation, _ = env.last()
        if termination or truncation:
            env.step(None)
            continue
        policy = seat_policies[raw.agent_name_mapping[agent]]
        env.step(policy.act(observation, env=raw))
    return list(raw.game.scores)


BATCH_GAMES = 1000
"""Games played at once by ``play_games`` (bounds memory; larger batches run faster)."""


def play_games(
    rules: Rules,
    seat_policies: Sequence[Sequence[Any]],
    game_seeds: Sequence[int],
    progress: Any = None,
    moves: list[list[Move]] | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Play game ``g`` with seed ``game_seeds[g]`` and ``seat_policies[g][seat]`` to its end, all
    games at once on the vector env, each policy choosing for all its games in one batch call
    (``act_batch``, else ``act`` per game). Returns (final scores ``int64[games, sides]``, winner
    side ``int64[games]``, -1 for a draw). The same seeds and policies give the same games as
    the AEC env (``play_game``) would. With ``moves`` (a list per game), every play is appended
    to its game's list as ``(seat, action, explanation)`` (``agents.evaluation.replay``), the
    explanation from one more batched forward pass of learned players."""
    games = len(game_seeds)
    sides = rules.num_sides
    scores = np.zeros((games, sides), dtype=np.int64)
    winners = np.full(games, -1, dtype=np.int64)
    distinct: list[Any] = []
    for row in seat_policies:
        for policy in row:
            if not any(policy is p for p in distinct):
                distinct.append(policy)
    actors = [batch_actor(p) for p in distinct]
    table = np.array(
        [[next(k for k, p in enumerate(distinct) if p is q) for q in row] for row in seat_policies],
        dtype=np.int64,
    )
    for start in range(0, games, BATCH_GAMES):
        chunk = np.arange(start, min(start + BATCH_GAMES, games))
        venv = VectorEnv(len(chunk), rules=rules, copy=False)
        state = venv.reset(options={"game_seeds": np.asarray(game_seeds)[chunk]})
        live = np.ones(len(chunk), dtype=bool)
        who = table[chunk]
        while live.any():
            rows = np.flatnonzero(live)
            movers = who[rows, state["current_player"][rows]]
            actions = np.empty(len(rows), dtype=np.int64)
            for k in np.unique(movers):
                pick = movers == k
                chosen = rows[pick]
                actions[pick] = actors[k](
                    state["observation"][chosen], state["action_mask"][chosen]
                )
                if moves is not None:
                    _note_moves(moves, chunk, chosen, state, actions[pick], distinct[k])
            state = venv.step_some(rows, actions)
            ended = rows[state["terminated"][rows]]
            if ended.size:
                scores[chunk[ended]] = state["final_scores"][ended, :sides]
                winners[chunk[ended]] = state["winner"][ended]
                live[ended] = False
                if progress is not None:
                    progress.update(len(ended))
    return scores, winners


def _note_moves(
    moves: list[list[Move]],
    chunk: np.ndarray,
    rows: np.ndarray,
    state: dict[str, np.ndarray],
    actions: np.ndarray,
    policy: Any,
) -> None:
    explained: list[Any] = [None] * len(rows)
    if hasattr(policy, "explain_batch"):
        probs, values = policy.explain_batch(state["observation"][rows], state["action_mask"][rows])
        explained = [explanation_of(p, float(v)) for p, v in zip(probs, values, strict=True)]
    seats = state["current_player"][rows]
    for row, seat, action, note in zip(rows, seats, actions, explained, strict=True):
        moves[chunk[row]].append((int(seat), int(action), note))


def duplicate_match(
    a: Any,
    b: Any,
    table: str = "2p",
    deals: int = 100,
    mode: str = "game",
    seed: int = 0,
    names: tuple[str, str] = ("A", "B"),
    progress: bool = False,
    record: str | Path | None = None,
    **rule_fields: Any,
) -> MatchResult:
    """``deals`` deals, each played twice with A and B swapping sides (seats 0/2 and 1/3); deal
    ``d`` is the game seed ``seed + d`` in both of its games. The games run in batch. With
    ``record`` (a folder), one JSON record per game goes there (``agents.evaluation.replay``), named
    ``<A>-vs-<B>-deal<d>-<a|b>-seat0.json`` (which side sat at seat 0)."""
    if table not in TABLES:
        raise ValueError(f"table must be one of {list(TABLES)}, got {table!r}")
    if mode not in ("game", "round"):
        raise ValueError(f'mode must be "game" or "round", got {mode!r}')
    fields = dict(TABLES[table], **rule_fields)
    if mode == "round":
        fields["max_rounds"] = 1
    rules = Rules(**fields)
    side_a, side_b = side_policies(a, rules.teams), side_policies(b, rules.teams)
    seat_policies, game_seeds, a_sides = [], [], []
    for deal in range(deals):
        for a_side in (0, 1):
            sides = (side_a, side_b) if a_side == 0 else (side_b, side_a)
            seat_policies.append(
                [sides[rules.side_of(s)][s // 2] for s in range(rules.num_players)]
            )
            game_seeds.append(seed + deal)
            a_sides.append(a_side)
    bar = None
    if progress:
        from tqdm import tqdm

        bar = tqdm(total=2 * deals, desc=f"{names[0]} vs {names[1]}", unit="game", leave=False)
    moves: list[list[Move]] | None = [[] for _ in game_seeds] if record is not None else None
    scores, winners = play_games(rules, seat_policies, game_seeds, progress=bar, moves=moves)
    if bar is not None:
        bar.close()
    if moves is not None:
        assert record is not None
        for g, (game_moves, a_side) in enumerate(zip(moves, a_sides, strict=True)):
            seat_names = [names[0] if rules.side_of(s) == a_side else names[1]
                          for s in range(rules.num_players)]  # fmt: skip
            deal = g // 2
            stem = f"{safe_name(names[0])}-vs-{safe_name(names[1])}-deal{deal:05d}"
            write_record(
                build_record(rules, game_seeds[g], game_moves, seat_names, table=table,
                             mode=mode, deal=deal, source="agents.evaluate"),
                Path(record) / f"{stem}-{'ab'[a_side]}-seat0.json",
            )  # fmt: skip
    mine = np.array(a_sides)
    rows = np.arange(len(mine))
    per_game = scores[rows, mine] - scores[rows, 1 - mine]
    diff = float(per_game.sum())
    per_deal = per_game.reshape(deals, 2).mean(axis=1)
    spread = 1.96 * float(per_deal.std(ddof=1)) / math.sqrt(deals) if deals > 1 else float("nan")
    draws = int((winners < 0).sum())
    wins = int((winners == mine).sum())
    losses = len(mine) - wins - draws
    games = 2 * deals
    low, high = wilson_interval(wins + draws / 2, games)
    return MatchResult(
        a=names[0],
        b=names[1],
        table=table,
        mode=mode,
        games=games,
        wins=wins,
        draws=draws,
        losses=losses,
        win_rate=(wins + draws / 2) / games,
        ci_low=low,
        ci_high=high,
        point_diff=diff / games,
        point_diff_ci=spread,
    )


def _win_matrix(names: Sequence[str], results: Sequence[MatchResult]) -> np.ndarray:
    """``wins[i, j]``: games ``names[i]`` won against ``names[j]`` (draws as half)."""
    index = {n: i for i, n in enumerate(names)}
    wins = np.zeros((len(names), len(names)))
    for r in results:
        i, j = index[r.a], index[r.b]
        w = r.wins + r.draws / 2
        wins[i, j] += w
        wins[j, i] += r.games - w
    return wins


def _strengths(wins: np.ndarray, iterations: int = 500) -> np.ndarray:
    """Bradley-Terry strengths by the MM algorithm, with a prior half game won and half lost
    against a player of strength 1 (keeps an unbeaten or winless player finite)."""
    k = len(wins)
    games = wins + wins.T
    won = 0.5 + wins.sum(axis=1)
    strength = np.ones(k)
    for _ in range(iterations):
        pair = games / (strength[:, None] + strength[None, :])
        np.fill_diagonal(pair, 0.0)
        strength = won / (1.0 / (strength + 1.0) + pair.sum(axis=1))
        strength /= np.exp(np.log(strength).mean())
    return strength


def bradley_terry(
    names: Sequence[str], results: Sequence[MatchResult], iterations: int = 500
) -> dict[str, float]:
    """Bradley-Terry ratings from pairwise results (draws as half wins), on an Elo-like scale
    (400 log10, mean 1500)."""
    strength = _strengths(_win_matrix(names, results), iterations)
    return {n: float(1500 + 400 * np.log10(strength[i])) for i, n in enumerate(names)}


def rating_intervals(
    names: Sequence[str], results: Sequence[MatchResult], samples: int = 200, seed: int = 0
) -> dict[str, tuple[float, float]]:
    """95% intervals of the Bradley-Terry ratings by a parametric bootstrap: every match's
    (wins, draws, losses) redrawn from its own frequencies, the ratings refitted, ``samples``
    times (seeded: the same results give the same intervals)."""
    rng = np.random.default_rng(seed)
    index = {n: i for i, n in enumerate(names)}
    fitted = np.empty((samples, len(names)))
    for t in range(samples):
        wins = np.zeros((len(names), len(names)))
        for r in results:
            w, d, _ = rng.multinomial(r.games, np.array([r.wins, r.draws, r.losses]) / r.games)
            i, j = index[r.a], index[r.b]
            wins[i, j] += w + d / 2
            wins[j, i] += r.games - w - d / 2
        fitted[t] = 1500 + 400 * np.log10(_strengths(wins, iterations=200))
    low, high = np.percentile(fitted, [2.5, 97.5], axis=0)
    return {n: (float(low[i]), float(high[i])) for i, n in enumerate(names)}


def round_robin(
    specs: Sequence[str],
    endgame: bool = True,
    known: Sequence[MatchResult] = (),
    **match_kwargs: Any,
) -> tuple[list[MatchResult], dict]:
    """Every pair of ``specs`` (baseline names, checkpoint paths, ``X+Y`` team sides) meets once,
    but for the pairs ``known`` already holds (their results are kept: a round-robin extended by
    new players); ``endgame=False`` plays checkpoints without the endgame search."""
    from agents.registry import make_policy

    def make(spec: str, seed: int) -> Any:
        return make_policy(spec, seed=seed, endgame=endgame)

    played = {frozenset((r.a, r.b)) for r in known}
    results = list(known)
    pairs = [(a, b) for i, a in enumerate(specs) for b in specs[i + 1 :]]
    pairs = [(a, b) for a, b in pairs if frozenset((a, b)) not in played]
    needed = {spec for pair in pairs for spec in pair}
    policies = {spec: _load_side(spec, make) for spec in specs if spec in needed}
    for a, b in pairs:
        result = duplicate_match(policies[a], policies[b], names=(a, b), **match_kwargs)
        print(result.line(), flush=True)
        results.append(result)
    return results, bradley_terry(list(specs), results)


def _load_side(spec: str, make_policy: Callable[..., Any]) -> Any:
    if "+" in spec:
        first, partner = spec.split("+", 1)
        return (make_policy(first, seed=1), make_policy(partner, seed=2))
    return make_policy(spec, seed=1)


def results_table(
    results: Sequence[MatchResult],
    ratings: dict[str, float] | None = None,
    intervals: dict[str, tuple[float, float]] | None = None,
) -> str:
    lines = [
        "| A | B | games | A win rate [95% CI] | mean point diff |",
        "| --- | --- | --- | --- | --- |",
    ]
    for r in results:
        lines.append(
            f"| {r.a} | {r.b} | {r.games} | {r.win_rate:.1%} [{r.ci_low:.1%}, {r.ci_high:.1%}] "
            f"| {r.point_diff:+.2f} |"
        )
    if ratings:
        lines += ["", "| policy | rating | 95% interval |", "| --- | --- | --- |"]
        for name, rating in sorted(ratings.items(), key=lambda item: -item[1]):
            low, high = (intervals or {}).get(name, (float("nan"), float("nan")))
            span = f"{low:.0f} to {high:.0f}" if intervals else ""
            lines.append(f"| {name} | {rating:.0f} | {span} |")
    return "\n".join(lines)


def plot_curves(run_dirs: Sequence[str | Path], out: str | Path | None = None) -> Path:
    """Win rate against each baseline over training steps, with 95% bands, as a PNG."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(8, 4.5))
    for run in map(Path, run_dirs):
        path = run / "eval.csv"
        if not path.is_file():
            raise ValueError(f"{path} not found: is {run} a training run directory?")
        rows = list(csv.DictReader(path.open()))
        for opponent in sorted({r["opponent"] for r in rows}):
            mine = [r for r in rows if r["opponent"] == opponent]
            steps = [int(r["env_steps"]) for r in mine]
            rate = [float(r["win_rate"]) for r in mine]
            ax.plot(steps, rate, marker="o", ms=3, label=f"{run.name} vs {opponent}")
            ax.fill_between(
                steps,
                [float(r["ci_low"]) for r in mine],
                [float(r["ci_high"]) for r in mine],
                alpha=0.2,
            )
    ax.axhline(0.5, color="grey", lw=0.8, ls="--")
    ax.set_xlabel("environment steps")
    ax.set_ylabel("win rate (duplicate deals)")
    ax.set_ylim(0, 1)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    out = Path(out) if out else Path(run_dirs[0]) / "curves.png"
    fig.savefig(out, dpi=120)
    plt.close(fig)
    return out


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        description=__doc__.splitlines()[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("policies", nargs="*", help="baseline names or checkpoint paths")
    parser.add_argument("--table", choices=list(TABLES), default="2p")
    parser.add_argument("--deals", type=int, default=200, help="deals per pair (x2 games)")
    parser.add_argument("--mode", choices=["game", "round"], default="game")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--target-score", type=int, default=100)
    parser.add_argument("--json", help="write the results here")
    parser.add_argument(
        "--no-endgame", action="store_true", help="checkpoints play without the endgame search"
    )
    parser.add_argument(
        "--record", metavar="DIR", help="write one JSON record per game here (for replays)"
    )
    parser.add_argument(
        "--extend", metavar="FILE",
        help="a round-robin's --json file: add the given policies to it, playing only new pairs "
        "(same --table, --mode, --deals, --seed as it was played with)",
    )  # fmt: skip
    parser.add_argument("--curves", nargs="+", metavar="RUN_DIR", help="plot training curves")
    parser.add_argument("--out", help="PNG path for --curves")
    args = parser.parse_args(argv)
    torch.set_num_threads(1)  # the games run in batch; one thread leaves a core to spare
    if args.curves:
        print(f"wrote {plot_curves(args.curves, args.out)}")
        return
    known: list[MatchResult] = []
    specs = list(args.policies)
    if args.extend:
        known = _previous_results(args.extend, args.table, args.mode, 2 * args.deals, parser)
        previous = [n for r in known for n in (r.a, r.b)]
        specs = list(dict.fromkeys(previous + specs))
    if len(specs) < 2:
        parser.error("give two policies (or more for a round-robin), or --curves RUN_DIR")
    if args.deals < 1:
        parser.error("--deals must be at least 1")
    kwargs = dict(
        table=args.table,
        deals=args.deals,
        mode=args.mode,
        seed=args.seed,
        target_score=args.target_score,
        progress=True,
        record=args.record,
    )
    results, ratings = round_robin(specs, endgame=not args.no_endgame, known=known, **kwargs)
    intervals = rating_intervals(specs, results, seed=args.seed)
    print()
    if len(specs) > 2:
        print(results_table(results, ratings, intervals))
    else:
        print(results_table(results))
    if args.record:
        written = 2 * args.deals * (len(results) - len(known))
        print(f"\nwrote {written} game records to {args.record}")
    if args.json:
        payload = {
            "results": [asdict(r) for r in results],
            "ratings": ratings,
            "rating_intervals": intervals,
        }
        Path(args.json).write_text(json.dumps(payload, indent=2))
        print(f"\nwrote {args.json}")


def _previous_results(
    path: str, table: str, mode: str, games: int, parser: argparse.ArgumentParser
) -> list[MatchResult]:
    try:
        payload = json.loads(Path(path).read_text())
        known = [MatchResult(**r) for r in payload["results"]]
    except (OSError, ValueError, KeyError, TypeError) as error:
        parser.error(f"--extend {path}: not a readable agents.evaluate --json file ({error})")
    for r in known:
        if (r.table, r.mode, r.games) != (table, mode, games):
            parser.error(
                f"--extend {path}: its {r.a} vs {r.b} was {r.games} {r.mode}s of {r.table}; "
                f"this run plays {games} {mode}s of {table} (give the same --table, --mode, "
                "--deals)"
            )
    return known


if __name__ == "__main__":
    main()
