"""Duplicate matches: every deal played twice with the same cards, the sides swapping seats, so
the luck of the deal cancels out; Wilson intervals on the win rate, intervals on the point
difference over deals. Games run in batch on the vector env (``play_games``).

In the team game a side may be two different policies, a ``(first seat, partner)`` pair.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

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
    num_threads: int | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Play game ``g`` with seed ``game_seeds[g]`` and ``seat_policies[g][seat]`` to its end, all
    games at once on the vector env, each policy choosing for all its games in one batch call
    (``act_batch``, else ``act`` per game). Returns (final scores ``int64[games, sides]``, winner
    side ``int64[games]``, -1 for a draw). The same seeds and policies give the same games as
    the AEC env (``play_game``) would. With ``moves`` (a list per game), every play is appended
    to its game's list as ``(seat, action, explanation)`` (``agents.evaluation.replay``), the
    explanation from one more batched forward pass of learned players. ``num_threads``: the vector
    env's threads (``None``: every core this process may use; the games are the same)."""
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
        venv = VectorEnv(len(chunk), rules=rules, copy=False, num_threads=num_threads)
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
    num_threads: int | None = None,
    **rule_fields: Any,
) -> MatchResult:
    """``deals`` deals, each played twice with A and B swapping sides (seats 0/2 and 1/3); deal
    ``d`` is the game seed ``seed + d`` in both of its games. The games run in batch. With
    ``record`` (a folder), one JSON record per game goes there (``agents.evaluation.replay``), named
    ``<A>-vs-<B>-deal<d>-<a|b>-seat0.json`` (which side sat at seat 0). ``num_threads``: the
    vector env's threads (``None``: every core; the results are the same for any count)."""
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
    scores, winners = play_games(rules, seat_policies, game_seeds, progress=bar, moves=moves,
                                 num_threads=num_threads)  # fmt: skip
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
