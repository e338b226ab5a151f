"""Duplicate matches: every deal played twice with the same cards, the sides swapping seats, so
the luck of the deal cancels out; Wilson intervals on the win rate, intervals on the point
difference over deals. Games run in batch on the vector env (``play_games``).

In the team game a side may be two different policies, a ``(first seat, partner)`` pair.
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from agents.evaluation.luck import (
    CHANCE_POINTS,
    CHANCE_WIN,
    DECISION_POINTS,
    DECISION_WIN,
    ENDGAME_GAME,
    ENDGAME_NONE,
    ENDGAME_POINTS,
    OUTCOME_POINTS,
    ROLLOUT_GREEDY,
    ROLLOUT_HEURISTIC,
    ROLLOUT_NETWORK,
    luck_corrections,
    policy_arrays,
)
from agents.evaluation.replay import Move, build_record, explanation_of, safe_name, write_record
from agents.learning.config import SearchConfig
from agents.learning.state_value import StateValue, load_state_value
from agents.players.basic import GreedyPolicy
from agents.registry import make_policy
from agents.search.equity import objective_table
from agents.search.players import ISMCTSPolicy, PIMCPolicy
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
    """A duplicate match's figures for side A. With variance reduction, ``point_diff``,
    ``win_rate`` (full games) and their intervals are the variance-reduced estimates and the
    ``raw_`` fields the plain duplicate ones of the same games; without it both hold the plain
    figures."""

    a: str
    b: str
    table: str
    mode: str
    games: int
    wins: int
    draws: int
    losses: int
    win_rate: float
    """(wins + draws / 2) / games, for side A (variance-reduced in full games, if asked)."""
    ci_low: float
    ci_high: float
    point_diff: float
    """Mean of A's final score minus B's, per game (variance-reduced, if asked)."""
    point_diff_ci: float = float("nan")
    """Half-width of the 95% interval of ``point_diff`` (over deals: each deal's two games
    averaged, as the luck of the deal cancels within them)."""
    raw_point_diff: float = float("nan")
    """The plain duplicate mean point difference of the same games."""
    raw_point_diff_ci: float = float("nan")
    raw_win_rate: float = float("nan")
    """The plain win rate of the same games (its Wilson interval: ``raw_ci_low``/``high``)."""
    raw_ci_low: float = float("nan")
    raw_ci_high: float = float("nan")
    deal_values: np.ndarray | None = field(default=None, repr=False)
    """A's point difference per deal (its two games averaged), variance-reduced if asked."""
    raw_deal_values: np.ndarray | None = field(default=None, repr=False)
    win_deal_values: np.ndarray | None = field(default=None, repr=False)
    """A's result per deal (1 win, 1/2 draw, 0 loss; its two games averaged), variance-reduced
    in full games if asked."""
    raw_win_deal_values: np.ndarray | None = field(default=None, repr=False)
    point_corrections: np.ndarray | None = field(default=None, repr=False)
    """What luck contributed to A's point difference per deal, as the value function sees it
    (variance reduction only): ``deal_values`` is ``raw_deal_values`` minus these, weighted."""
    win_corrections: np.ndarray | None = field(default=None, repr=False)
    """The same for A's result per deal (full games)."""
    variance_reduced: bool = False
    decisions: dict[str, str] = field(default_factory=dict)
    """Per side (``a``, ``b``): how its moves were corrected: ``"sampled"`` (a decision correction
    at each move), ``"deterministic"`` (none needed) or ``"unknown"`` (chance corrections only)."""
    weights: dict[str, list[float]] = field(default_factory=dict)
    """The corrections' weights in each variance-reduced estimate, fitted on the deals
    (``cross_fitted``): ``"points"`` on (``point_corrections``, ``win_corrections``) in full
    games, on ``point_corrections`` alone in single rounds; ``"win"`` on (``win_corrections``,
    ``point_corrections``). Near 1 on its own corrections the value function explains the luck;
    near 0 they were noise and the estimate is close to the plain one."""
    seconds: float = float("nan")
    """The match's time, corrections included."""
    correction_seconds: float = float("nan")
    """The time spent computing the corrections (0 without variance reduction)."""

    PER_DEAL: ClassVar[tuple[str, ...]] = (
        "deal_values", "raw_deal_values", "win_deal_values", "raw_win_deal_values",
        "point_corrections", "win_corrections",
    )  # fmt: skip
    """The fields that hold one value a deal."""

    def __post_init__(self) -> None:
        for name in self.PER_DEAL:
            value = getattr(self, name)
            if value is not None:
                setattr(self, name, np.asarray(value, dtype=np.float64))

    def to_json(self, per_deal: bool = True) -> dict[str, Any]:
        """The fields as JSON-ready values: the per-deal arrays as lists, or left out
        (``per_deal=False``: the match's figures alone)."""
        out = asdict(self)
        if not per_deal:
            out = {k: v for k, v in out.items() if k not in self.PER_DEAL}
        return {k: v.tolist() if isinstance(v, np.ndarray) else v for k, v in out.items()}

    def line(self) -> str:
        text = (
            f"{self.a} vs {self.b} ({self.table}, {self.mode}s): {self.win_rate:.1%} "
            f"[95% CI {self.ci_low:.1%}-{self.ci_high:.1%}] over {self.games} games "
            f"({self.wins}W {self.draws}D {self.losses}L), mean point difference "
            f"{self.point_diff:+.2f}"
        )
        if self.variance_reduced:
            text += (
                f" +/- {self.point_diff_ci:.2f} variance-reduced (plain: {self.raw_point_diff:+.2f}"
                f" +/- {self.raw_point_diff_ci:.2f}"
                + (f", win rate {self.raw_win_rate:.1%}" if self.mode == "game" else "")
                + ")"
            )
        return text


def cross_fitted(raw: np.ndarray, corrections: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per-deal estimates ``raw - corrections @ w`` with the weights ``w`` that make their
    variance least (the least-squares fit of ``raw`` on the corrections: 1 on a correction that
    explains the results the way it should, near 0 on one that is noise), fitted on the other
    half of the deals (even deals take the odd deals' weights and the other way round), so the
    estimate stays unbiased: every correction has mean zero and the weights applied to a deal are
    independent of it. ``corrections``: one column per kind of correction (``[n]`` or ``[n, k]``;
    the first column is the estimate's own, used alone when the deals are too few to fit the
    others). Returns the values and the two folds' mean weights. Fewer than 4 deals: the first
    column at weight 1 (plain AIVAT)."""
    raw = np.asarray(raw, dtype=np.float64)
    c = np.asarray(corrections, dtype=np.float64).reshape(len(raw), -1)
    n, k = c.shape
    if n < 4:
        return raw - c[:, 0], np.eye(k)[0]
    if n // 2 < 4 * (k + 1):
        c = c[:, :1]
    folds = np.arange(n) % 2
    weights = np.zeros((2, k))
    for fold in (0, 1):
        other = folds != fold
        x = c[other] - c[other].mean(axis=0)
        y = raw[other] - raw[other].mean()
        fit = np.linalg.lstsq(x, y, rcond=None)[0] if np.any(x) else np.zeros(c.shape[1])
        weights[fold, : c.shape[1]] = fit
    values = raw - np.einsum("ij,ij->i", c, weights[folds, : c.shape[1]])
    return values, weights.mean(axis=0)


def mean_interval(values: np.ndarray) -> float:
    """Half-width of the 95% normal interval of the mean of ``values`` (nan for fewer than 2)."""
    if len(values) < 2:
        return float("nan")
    return 1.96 * float(np.std(values, ddof=1)) / math.sqrt(len(values))


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


@dataclass
class MoveTrace:
    """The moves of batched games as they were played, to walk them again
    (``agents.evaluation.luck``): each game's actions in order, and for each move the row of
    ``prob_table`` holding the mover's probability of every action (-1: the mover gives none,
    see :func:`decision_model`)."""

    actions: list[list[int]]
    prob_rows: list[list[int]]
    prob_table: list[np.ndarray]

    @classmethod
    def empty(cls, games: int) -> MoveTrace:
        return cls([[] for _ in range(games)], [[] for _ in range(games)], [])


DECISION_MODELS = ("sampled", "deterministic", "unknown")


def decision_model(policy: Any) -> str:
    """What a policy declares of its moves in its ``move_model`` attribute: ``"sampled"`` (it draws
    them from ``move_probabilities(observations, masks) -> float[B, 208]``), ``"deterministic"``
    (a function of the observation) or, for a policy that declares nothing, ``"unknown"``."""
    declared = getattr(policy, "move_model", "unknown")
    if declared not in DECISION_MODELS:
        raise ValueError(
            f"{policy!r}: move_model must be one of {DECISION_MODELS}, got {declared!r}"
        )
    if declared == "sampled" and not callable(getattr(policy, "move_probabilities", None)):
        raise TypeError(f"{policy!r} says its moves are sampled but has no move_probabilities")
    return str(declared)


def play_games(
    rules: Rules,
    seat_policies: Sequence[Sequence[Any]],
    game_seeds: Sequence[int],
    progress: Any = None,
    moves: list[list[Move]] | None = None,
    num_threads: int | None = None,
    trace: MoveTrace | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Play game ``g`` with seed ``game_seeds[g]`` and ``seat_policies[g][seat]`` to its end, all
    games at once on the vector env, each policy choosing for all its games in one batch call
    (``act_batch``, else ``act`` per game). Returns (final scores ``int64[games, sides]``, winner
    side ``int64[games]``, -1 for a draw). The same seeds and policies give the same games as
    the AEC env (``play_game``) would. With ``moves`` (a list per game), every play is appended
    to its game's list as ``(seat, action, explanation)`` (``agents.evaluation.replay``), the
    explanation from one more batched forward pass of learned players. ``num_threads``: the vector
    env's threads (``None``: every core this process may use; the games are the same). With
    ``trace``, every game's actions (and a sampling player's probabilities) are kept there."""
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
    sampled = [decision_model(p) == "sampled" for p in distinct]
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
                try:
                    actions[pick] = actors[k](
                        state["observation"][chosen], state["action_mask"][chosen]
                    )
                except Exception as error:
                    culprit = getattr(distinct[k], "name", "") or type(distinct[k]).__name__
                    seed = int(np.asarray(game_seeds)[chunk[chosen[0]]])
                    raise RuntimeError(
                        f"player {culprit!r} failed choosing a move (game seed {seed}): "
                        f"{type(error).__name__}: {error}"
                    ) from error
                if moves is not None:
                    _note_moves(moves, chunk, chosen, state, actions[pick], distinct[k])
                if trace is not None:
                    _trace_moves(trace, chunk[chosen], state, chosen, actions[pick],
                                 distinct[k] if sampled[k] else None)  # fmt: skip
            state = venv.step_some(rows, actions)
            ended = rows[state["terminated"][rows]]
            if ended.size:
                # every seat's side score; seats 0..sides-1 sit on sides 0..sides-1
                scores[chunk[ended]] = state["final_scores"][ended, :sides]
                winners[chunk[ended]] = state["winner"][ended]
                live[ended] = False
                if progress is not None:
                    progress.update(len(ended))
    return scores, winners


def _trace_moves(
    trace: MoveTrace,
    games: np.ndarray,
    state: dict[str, np.ndarray],
    rows: np.ndarray,
    actions: np.ndarray,
    sampler: Any,
) -> None:
    if sampler is None:
        prob_rows = np.full(len(rows), -1, dtype=np.int64)
    else:
        probs = np.asarray(
            sampler.move_probabilities(state["observation"][rows], state["action_mask"][rows]),
            dtype=np.float64,
        )
        prob_rows = len(trace.prob_table) + np.arange(len(rows))
        trace.prob_table.extend(probs)
    for game, action, row in zip(games.tolist(), actions.tolist(), prob_rows.tolist(), strict=True):
        trace.actions[game].append(action)
        trace.prob_rows[game].append(row)


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


def _policy(spec: Any, seed: int) -> Any:
    """A policy, or the policy a name gives (``make_policy``), seeded by the match."""
    return make_policy(spec, seed=seed) if isinstance(spec, str) else spec


def _side_name(spec: Any, fallback: str) -> str:
    if isinstance(spec, str):
        return spec
    if isinstance(spec, tuple):
        return "+".join(_side_name(p, fallback) for p in spec)
    return str(getattr(spec, "name", "") or fallback)


def duplicate_match(
    a: Any,
    b: Any,
    table: str = "2p",
    deals: int = 100,
    mode: str = "game",
    seed: int = 0,
    names: tuple[str, str] | None = None,
    progress: bool = False,
    record: str | Path | None = None,
    num_threads: int | None = None,
    variance_reduction: bool = False,
    value: StateValue | str | Path | None = None,
    **rule_fields: Any,
) -> MatchResult:
    """``deals`` deals, each played twice with A and B swapping sides (seats 0/2 and 1/3); deal
    ``d`` is the game seed ``seed + d`` in both of its games. A and B: policies, names
    ``make_policy`` takes, or in the team game ``(first seat, partner)`` pairs. The games run in
    batch. With ``record`` (a folder), one JSON record per game goes there
    (``agents.evaluation.replay``), named ``<A>-vs-<B>-deal<d>-<a|b>-seat0.json`` (which side sat
    at seat 0). ``num_threads``: the vector env's threads (``None``: every core; the results are
    the same for any count).

    ``variance_reduction``: the games are walked again and what luck contributed is subtracted
    (``agents.evaluation.luck``): the point difference and, in full games, the win rate become
    the variance-reduced estimates, the plain ones kept in the ``raw_`` fields. ``value``: the
    value function (a ``StateValue`` or a file; default: the table's packaged one)."""
    if table not in TABLES:
        raise ValueError(f"table must be one of {list(TABLES)}, got {table!r}")
    if mode not in ("game", "round"):
        raise ValueError(f'mode must be "game" or "round", got {mode!r}')
    if isinstance(deals, bool) or not isinstance(deals, int) or deals < 1:
        raise ValueError(f"deals must be a positive int, got {deals!r}")
    fields = dict(TABLES[table], **rule_fields)
    if mode == "round":
        fields["max_rounds"] = 1
    rules = Rules(**fields)
    if names is None:
        names = (_side_name(a, "A"), _side_name(b, "B"))
    luck_value: StateValue | None = None
    if variance_reduction:
        luck_value = value if isinstance(value, StateValue) else load_state_value(value, table)
    elif value is not None:
        raise ValueError("value= is the value function of variance_reduction=True")
    a = tuple(_policy(p, seed) for p in a) if isinstance(a, tuple) else _policy(a, seed)
    b = tuple(_policy(p, seed + 1) for p in b) if isinstance(b, tuple) else _policy(b, seed + 1)
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
    trace = MoveTrace.empty(len(game_seeds)) if luck_value is not None else None
    began = time.perf_counter()
    scores, winners = play_games(rules, seat_policies, game_seeds, progress=bar, moves=moves,
                                 num_threads=num_threads, trace=trace)  # fmt: skip
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
    per_game = (scores[rows, mine] - scores[rows, 1 - mine]).astype(np.float64)
    won = np.where(winners == mine, 1.0, np.where(winners < 0, 0.5, 0.0))
    draws = int((winners < 0).sum())
    wins = int((winners == mine).sum())
    losses = len(mine) - wins - draws
    games = 2 * deals
    low, high = wilson_interval(wins + draws / 2, games)
    raw_points = per_game.reshape(deals, 2).mean(axis=1)
    raw_won = won.reshape(deals, 2).mean(axis=1)
    result = MatchResult(
        a=names[0], b=names[1], table=table, mode=mode, games=games, wins=wins, draws=draws,
        losses=losses, win_rate=(wins + draws / 2) / games, ci_low=low, ci_high=high,
        point_diff=float(per_game.mean()), point_diff_ci=mean_interval(raw_points),
        raw_point_diff=float(per_game.mean()), raw_point_diff_ci=mean_interval(raw_points),
        raw_win_rate=(wins + draws / 2) / games, raw_ci_low=low, raw_ci_high=high,
        deal_values=raw_points, raw_deal_values=raw_points, win_deal_values=raw_won,
        raw_win_deal_values=raw_won, correction_seconds=0.0,
    )  # fmt: skip
    if luck_value is not None and trace is not None:
        played = time.perf_counter()
        rollout, nets = rollout_players(seat_policies)
        searches, equity = endgame_searches(seat_policies, rules)
        figures = luck_corrections(rules, game_seeds, trace.actions, trace.prob_rows,
                                   trace.prob_table, luck_value, players=rollout,
                                   policies=nets, endgames=searches, equity=equity)  # fmt: skip
        if not np.array_equal(figures[:, OUTCOME_POINTS], scores[:, 0] - scores[:, 1]):
            raise RuntimeError("the walked games do not end as the played ones (a bug)")
        sign = np.where(mine == 0, 1.0, -1.0)
        point_luck = sign * (figures[:, CHANCE_POINTS] + figures[:, DECISION_POINTS])
        point_luck = point_luck.reshape(deals, 2).mean(axis=1)
        win_luck = sign * (figures[:, CHANCE_WIN] + figures[:, DECISION_WIN])
        win_luck = win_luck.reshape(deals, 2).mean(axis=1)
        both = np.stack([point_luck, win_luck], axis=1)
        deal_points, fitted = cross_fitted(raw_points, both if mode == "game" else point_luck)
        result.weights["points"] = fitted.tolist()
        result.point_corrections = point_luck
        result.deal_values = deal_points
        result.point_diff = float(deal_points.mean())
        result.point_diff_ci = mean_interval(deal_points)
        if mode == "game":
            deal_won, fitted = cross_fitted(raw_won, both[:, ::-1])
            result.weights["win"] = fitted.tolist()
            result.win_corrections = win_luck
            result.win_deal_values = deal_won
            result.win_rate = float(deal_won.mean())
            half = mean_interval(deal_won)
            result.ci_low, result.ci_high = result.win_rate - half, result.win_rate + half
        result.variance_reduced = True
        result.decisions = {"a": _decisions(side_a), "b": _decisions(side_b)}
        result.correction_seconds = time.perf_counter() - played
    result.seconds = time.perf_counter() - began
    return result


def rollout_players(seat_policies: Sequence[Sequence[Any]]) -> tuple[np.ndarray, list[tuple]]:
    """The value function's rollout player of every seat of every game
    (``agents.evaluation.luck``) and the networks they use: ``greedy`` for a greedy seat; a
    learned player's own network, played greedily, for a learned seat (with or without search:
    the network is what of it can be run inside the walk); the heuristic for every other seat."""
    nets: list[tuple] = []
    ids: dict[int, int] = {}

    def code(policy: Any) -> int:
        if isinstance(policy, GreedyPolicy):
            return ROLLOUT_GREEDY
        model = getattr(policy, "model", None)
        if model is None or not hasattr(model, "state_to_pair"):
            return ROLLOUT_HEURISTIC
        if id(model) not in ids:
            arrays = policy_arrays(model)
            if arrays is None or len(nets) == 2:
                return ROLLOUT_HEURISTIC
            ids[id(model)] = len(nets)
            nets.append(arrays)
        return ROLLOUT_NETWORK + ids[id(model)]

    return np.array([[code(p) for p in row] for row in seat_policies], dtype=np.int64), nets


def endgame_searches(
    seat_policies: Sequence[Sequence[Any]], rules: Rules
) -> tuple[np.ndarray, np.ndarray]:
    """The endgame search each seat of each game plays in the last deal of a two-player round,
    which the walk's rollouts then play for it (``agents.evaluation.luck.ENDGAME_*``), and the
    game-chance table of ``ENDGAME_GAME``: the round's points for a search player (PIMC,
    IS-MCTS) whose endgame search is on, the player's objective for a learned player with its
    endgame search; none for every other seat and every other table."""
    table = objective_table(rules.num_players, rules.teams, [rules.bastra_points,
                            rules.jack_bastra_points, rules.most_cards_points],
                            rules.target_score)  # fmt: skip

    def code(policy: Any) -> int:
        search = getattr(policy, "search", None)
        if isinstance(search, SearchConfig):  # a learned player
            if getattr(policy, "sample", False) or not search.endgame:
                return ENDGAME_NONE
            return ENDGAME_GAME if search.objective == "game" else ENDGAME_POINTS
        if isinstance(policy, (PIMCPolicy, ISMCTSPolicy)) and policy.endgame:
            return ENDGAME_POINTS
        return ENDGAME_NONE

    codes = np.array([[code(p) if rules.num_players == 2 else ENDGAME_NONE for p in row]
                      for row in seat_policies], dtype=np.int64)  # fmt: skip
    return codes, np.array(table, dtype=np.int64)  # a writable copy: one compiled walk


def _decisions(side: tuple[Any, Any]) -> str:
    kinds = {decision_model(p) for p in side}
    for kind in ("unknown", "sampled"):
        if kind in kinds:
            return kind
    return "deterministic"
