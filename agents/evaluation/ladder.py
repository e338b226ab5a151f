"""A frozen rating ladder: any policy rated in Elo against packaged reference players whose
ratings were fitted once and are never refitted, so ratings made on different days compare.

    bastra rate POLICY [--table 2p|4p_teams] [--minutes M] [--precision E] [--json FILE]

The policy plays variance-reduced duplicate matches of full games (``duplicate_match(...,
variance_reduction=True)``) against ladder members near its running rating, in batches (the
member whose games tell the most about the rating a second, :meth:`Ladder.next_opponent`),
until the rating's 95% interval is at most ``+/-E`` Elo or ``M`` minutes have passed. The rating
solves ``sum over deals (v - E(r - R_opponent)) = 0``, ``v`` each deal's variance-reduced result
(1 win, 1/2 draw, 0 loss, its two games averaged, luck subtracted) and ``E(d) = 1 / (1 +
10^(-d / 400))`` the Elo expectation; its interval comes from the deals' spread (the delta method),
the members' ratings being fixed. Every batch and rating goes to the local store
(``agents.evaluation.store``), so rating a policy again extends its rating.
"""

from __future__ import annotations

import hashlib
import json
import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from agents.evaluation.matches import cross_fitted, duplicate_match
from agents.evaluation.store import RatingStore, StoredMatch
from agents.learning.state_value import PRETRAINED_DIR, StateValue, load_state_value
from agents.registry import make_policy, policy_problem
from bastra_env import __version__
from bastra_env.rules import TABLES

LADDER_FORMAT = "bastra-ladder"
BATCH_DEALS = 16
"""Deals a batch (32 full games): the rating and the choice of opponent are updated after each."""
SEED_BASE = 7_000_000
"""A rated policy's deals against a member are the game seeds ``SEED_BASE + 100_000 * k + d``,
``k`` the member's index on the ladder: distinct from the ladder's own fitting deals."""


@dataclass(frozen=True)
class Ladder:
    """The frozen reference players of a table and their ratings."""

    table: str
    version: str
    ratings: dict[str, float]
    fitted: dict[str, Any]
    """How the ratings were fitted: the matches, their deals and seeds, the command."""
    seconds: dict[str, float] = field(default_factory=dict)
    """Seconds a full game with each member takes, as measured when the ladder was frozen (on
    one machine: only their ratios matter): the cost that :meth:`next_opponent` weighs. A member
    missing counts as the slowest."""

    def next_opponent(self, rating: float, exclude: str | None, played: dict[str, int]) -> str:
        """The member to play next: the nearest two ``rating`` once each (so the rating is
        bracketed), then of the three nearest the one whose games tell the most about the
        rating a second: the Elo information of a game, ``p (1 - p)`` at the expected score
        ``p``, over its ``seconds``. A function of its arguments: the same run plays the same
        matches."""
        members = sorted((m for m in self.ratings if m != exclude),
                         key=lambda m: (abs(self.ratings[m] - rating), m))  # fmt: skip
        near = members[:3]
        for m in near[:2]:
            if played.get(m, 0) == 0:
                return m
        slowest = max(self.seconds.values(), default=1.0)

        def information_a_second(m: str) -> float:
            p = float(elo_expectation(rating - self.ratings[m]))
            return p * (1 - p) / max(self.seconds.get(m, slowest), 1e-6)

        return max(near, key=information_a_second)


def ladder_path(table: str) -> Path:
    return PRETRAINED_DIR / f"ladder_{table}.json"


def load_ladder(table: str, path: str | Path | None = None) -> Ladder:
    """The packaged ladder of ``table`` (or the file at ``path``); ``ValueError`` naming the
    tables that have one otherwise."""
    have = sorted(p.stem.removeprefix("ladder_") for p in PRETRAINED_DIR.glob("ladder_*.json"))
    if path is None:
        if table not in TABLES or table not in have:
            raise ValueError(f"no ladder for the table {table!r}; ladders exist for {have}")
        path = ladder_path(table)
    try:
        payload = json.loads(Path(path).read_text())
    except (OSError, ValueError) as error:
        raise ValueError(f"{path}: not a readable ladder file ({error})") from None
    if not isinstance(payload, dict) or payload.get("format") != LADDER_FORMAT:
        raise ValueError(f"{path}: not a ladder file (format {LADDER_FORMAT!r} expected)")
    if payload.get("table") != table:
        raise ValueError(f"{path}: the ladder of {payload.get('table')!r}, asked for {table!r}")
    seconds = {k: float(v) for k, v in payload.get("seconds_per_game", {}).items()}
    return Ladder(table, str(payload["version"]), {k: float(v) for k, v in
                  payload["ratings"].items()}, payload.get("fitted", {}), seconds)  # fmt: skip


def game_seconds(table: str, members: Sequence[str], deals: int = 2) -> dict[str, float]:
    """Seconds a full game of each member against the heuristic takes here (``deals`` duplicate
    deals, one thread): the ladder's ``seconds``."""
    out = {}
    for m in members:
        r = duplicate_match(m, "heuristic", table=table, deals=deals, mode="game", seed=1,
                            num_threads=1)  # fmt: skip
        out[m] = round(r.seconds / r.games, 4)
    return out


def freeze_ladder(
    round_robin: str | Path, table: str, version: str, command: str, out: str | Path
) -> Ladder:
    """Freeze the Bradley-Terry ratings of a round-robin (``agents.evaluate A B C ... --json``)
    into a ladder file: the members, their ratings (to 0.1 Elo), how they were fitted (the
    file, its command, the deals and seeds, the intervals) and each member's seconds a game
    (``game_seconds``). A ladder is frozen once; a new one takes a new ``version``, and ratings
    on different versions are not compared."""
    board = json.loads(Path(round_robin).read_text())
    results = board["results"]
    tables = {r["table"] for r in results}
    if tables != {table}:
        raise ValueError(f"{round_robin}: a round-robin of {sorted(tables)}, not of {table!r}")
    deals = sorted({r["games"] // 2 for r in results})
    fitted = {
        "source": str(round_robin), "command": command, "mode": results[0]["mode"],
        "method": "Bradley-Terry (Elo scale, 400 log10) on the plain duplicate round-robin",
        "deals_per_pair": deals, "games": sum(r["games"] for r in results),
        "rating_intervals": board.get("rating_intervals", {}),
    }  # fmt: skip
    ratings = {k: round(float(v), 1) for k, v in sorted(board["ratings"].items(),
                                                        key=lambda kv: kv[1])}  # fmt: skip
    seconds = game_seconds(table, list(ratings))
    payload = {"format": LADDER_FORMAT, "table": table, "version": version, "ratings": ratings,
               "fitted": fitted, "seconds_per_game": seconds}  # fmt: skip
    Path(out).write_text(json.dumps(payload, indent=1) + "\n")
    return Ladder(table, version, ratings, fitted, seconds)


def elo_expectation(diff: np.ndarray | float) -> np.ndarray:
    return 1.0 / (1.0 + np.power(10.0, -np.asarray(diff, dtype=np.float64) / 400.0))


def fit_rating(
    opponents: Sequence[float], values: Sequence[np.ndarray], low: float = -1000.0,
    high: float = 4000.0,
) -> tuple[float, float]:  # fmt: skip
    """(rating, half-width of its 95% interval) from each opponent's rating and the deals'
    results against it (the estimating equation of the module docs, solved by bisection). With
    results that no rating explains (all won or all lost) the rating sits at a bound and the
    interval is infinite."""
    ratings = np.concatenate([np.full(len(v), r) for r, v in zip(opponents, values, strict=True)])
    results = np.concatenate([np.asarray(v, dtype=np.float64) for v in values])
    total = float(results.sum())

    def excess(r: float) -> float:
        return float(elo_expectation(r - ratings).sum()) - total

    if excess(low) >= 0 or excess(high) <= 0:
        return (low if excess(low) >= 0 else high), math.inf
    a, b = low, high
    for _ in range(80):
        mid = (a + b) / 2
        if excess(mid) < 0:
            a = mid
        else:
            b = mid
    rating = (a + b) / 2
    spread = sum(len(v) * float(np.var(v, ddof=1)) for v in values if len(v) > 1)
    p = elo_expectation(rating - ratings)
    slope = float((p * (1 - p)).sum()) * math.log(10) / 400
    if spread <= 0 or slope <= 0:
        return rating, math.inf
    return rating, 1.96 * math.sqrt(spread) / slope


def reduced_results(history: Sequence[StoredMatch]) -> list[np.ndarray]:
    """Each stored match's per-deal results, variance-reduced: the plain results minus the win and
    point corrections, weighted by ``cross_fitted`` over the whole history (more deals fit the
    weights better than one batch)."""
    raw = np.concatenate([np.asarray(m.raw_win_values, dtype=np.float64) for m in history])
    luck = np.stack([np.concatenate([np.asarray(getattr(m, name), dtype=np.float64)
                                     for m in history])
                     for name in ("win_corrections", "point_corrections")], axis=1)  # fmt: skip
    values, _ = cross_fitted(raw, luck)
    return np.split(values, np.cumsum([len(m.raw_win_values) for m in history])[:-1])


def policy_identity(spec: str) -> str:
    """The name a rating is stored under: the spec, with the digest of its file for a path."""
    path = Path(spec.split(":", 1)[0])
    if path.is_file():
        digest = hashlib.sha256(path.read_bytes()).hexdigest()[:16]
        return f"{spec}@{digest}"
    return spec


@dataclass
class Rating:
    policy: str
    table: str
    rating: float
    ci: float
    games: int
    ladder_rating: float | None
    opponents: dict[str, int]
    """Deals played against each member."""
    seconds: float
    stopped: str
    """Why it stopped: "precision" or "minutes"."""

    def to_json(self) -> dict[str, Any]:
        return dict(self.__dict__)


def check_limits(minutes: float, precision: float) -> None:
    """``ValueError`` unless both are positive finite numbers (``rate`` and ``bastra rate``)."""
    for name, limit, what in (("--precision", precision, "a positive number of Elo points"),
                              ("--minutes", minutes, "positive")):  # fmt: skip
        if (isinstance(limit, bool) or not isinstance(limit, (int, float))
                or not limit > 0 or not math.isfinite(limit)):  # fmt: skip
            raise ValueError(f"{name} must be {what}, got {limit!r}")


def rate(
    spec: str,
    table: str = "2p",
    minutes: float = 5.0,
    precision: float = 20.0,
    store: RatingStore | None = None,
    value: StateValue | None = None,
    ladder: Ladder | None = None,
    progress: bool = False,
    on_batch: Callable[[Rating], None] | None = None,
) -> Rating:
    """Rate ``spec`` (a ``make_policy`` name, preset or checkpoint path) on ``table``'s ladder
    until its 95% half-width is at most ``precision`` Elo or ``minutes`` have passed (a batch
    started is finished). Earlier batches in ``store`` for the same policy count and are not
    replayed. ``ladder``: another ladder than the table's packaged one (``load_ladder``)."""
    check_limits(minutes, precision)
    ladder = ladder or load_ladder(table)
    if ladder.table != table:
        raise ValueError(f"the ladder is for the {ladder.table!r} table, asked for {table!r}")
    problem = policy_problem(spec)
    if problem:
        raise ValueError(problem)
    store = store or RatingStore()
    value = value or load_state_value(table=table)
    identity = policy_identity(spec)
    policy = make_policy(spec, seed=0)
    member_index = {m: k for k, m in enumerate(ladder.ratings)}
    players: dict[str, Any] = {}
    """The members played so far, each made when first chosen."""
    history = store.matches(identity, table, ladder.version)
    began = time.perf_counter()
    bar = None
    if progress:
        from tqdm import tqdm

        bar = tqdm(total=None, desc=f"rating {spec}", unit="game")

    def current() -> Rating:
        played: dict[str, int] = {}
        for m in history:
            played[m.opponent] = played.get(m.opponent, 0) + m.deals
        if history:
            rating, ci = fit_rating([ladder.ratings[m.opponent] for m in history],
                                    reduced_results(history))  # fmt: skip
        else:
            rating, ci = float(np.median(list(ladder.ratings.values()))), math.inf
        games = 2 * sum(played.values())
        seconds = time.perf_counter() - began
        return Rating(spec, table, rating, ci, games, ladder.ratings.get(spec), played, seconds, "")

    state = current()
    while not (state.ci <= precision and len(state.opponents) >= 2):
        if time.perf_counter() - began >= 60 * minutes:
            state.stopped = "minutes"
            break
        opponent = ladder.next_opponent(state.rating, spec, state.opponents)
        done = state.opponents.get(opponent, 0)
        seed = SEED_BASE + 100_000 * member_index[opponent] + done
        if opponent not in players:
            players[opponent] = make_policy(opponent, seed=1)
        r = duplicate_match(policy, players[opponent], table=table, deals=BATCH_DEALS,
                            mode="game", seed=seed, names=(spec, opponent),
                            variance_reduction=True, value=value)  # fmt: skip
        assert r.raw_win_deal_values is not None and r.raw_deal_values is not None
        assert r.win_corrections is not None and r.point_corrections is not None
        match = StoredMatch(opponent, seed, BATCH_DEALS, r.raw_win_deal_values.tolist(),
                            r.win_corrections.tolist(), r.raw_deal_values.tolist(),
                            r.point_corrections.tolist())  # fmt: skip
        history.append(match)
        state = current()
        store.add(identity, spec, table, ladder.version, match, state.rating, state.ci,
                  state.games, __version__)  # fmt: skip
        if bar is not None:
            bar.update(r.games)
            bar.set_postfix(rating=f"{state.rating:.0f}", ci=f"+/-{state.ci:.0f}", vs=opponent)
        if on_batch is not None:
            on_batch(state)
    else:
        state.stopped = "precision"
    if bar is not None:
        bar.close()
    state.seconds = time.perf_counter() - began
    return state
