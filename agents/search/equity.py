"""Game equity: a side's chance of winning a game to the target from the two sides' totals.

The endgame search (``agents.search.endgame``) scores the end of a round by the round's point
difference by default. A game to 100 is not won by points, though: ahead 95 to 60, holding the
other side under 40 more points wins whatever the difference; behind 70 to 96, the round is lost
unless the other side is held under 4 points. With ``objective="game"`` the search scores a round's
end by ``equity[mine, theirs]``: the chance that my side wins the game from those totals, the game
over when a side has reached the target and leads (R17), else decided by the rounds still to come.

The rounds to come are drawn from ``ROUND_POINTS_FILE``: each side's points in single rounds
the packaged model played against itself (``python -m agents.search.equity --write`` measures them;
both seat orders are counted, as the deal passes round after round). From those outcomes a
dynamic programme over the totals gives the table for any target (``equity_table``): from a
state below the target, the mean over next rounds of the state they lead to. A tie at or above
the target is worth one half (further rounds between equals, or a draw).

The table is in ``EQUITY_SCALE`` units (integers, so the search's alpha-beta stays exact).
Only two sides: the two-player game and the team game.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path

import numpy as np
from numba import njit

from agents.search.endgame_kernels import EQUITY_SCALE, POINTS_ONLY
from bastra_env.rules import TABLES

__all__ = ["EQUITY_SCALE", "chance", "equity_table", "game_equity", "objective_table"]
ROUND_POINTS_FILE = Path(__file__).resolve().parents[1] / "pretrained" / "round_points.json"
"""Measured round outcomes per table (``"2p"``, ``"4p_teams"``): ``[points, points, count]``."""
MEASURED_SCORING = {"bastra_points": 10, "jack_bastra_points": 50, "most_cards_points": 3}
"""The scoring rules the outcomes were measured under; ``solve`` uses the table only there."""
MARGIN = 200
"""Totals up to ``target + MARGIN`` have their own row and column; larger ones are clipped."""


@njit(cache=True)
def _fill(target: int, size: int, first: np.ndarray, second: np.ndarray, weights: np.ndarray,
          table: np.ndarray) -> None:  # fmt: skip
    """``table[a, b]`` (``float64[size, size]``) for every pair of totals: 1 / 0 / 0.5 where
    the game is over (a side at ``target`` or more and ahead / behind / tied), else the mean over
    the outcomes ``(first, second)`` (``weights`` summing to 1, none both zero) of the state
    they lead to, filled from the largest sums down (each outcome adds points)."""
    top = size - 1
    for a in range(size):
        for b in range(size):
            if a >= target or b >= target:
                table[a, b] = 1.0 if a > b else (0.0 if a < b else 0.5)
    for total in range(2 * target - 2, -1, -1):
        for a in range(max(0, total - target + 1), min(total, target - 1) + 1):
            b = total - a
            value = 0.0
            for k in range(first.shape[0]):
                value += weights[k] * table[min(a + first[k], top), min(b + second[k], top)]
            table[a, b] = value


def equity_table(target: int, outcomes: np.ndarray) -> np.ndarray:
    """``int64[target + MARGIN + 1, target + MARGIN + 1]``: ``EQUITY_SCALE`` times the chance
    that the side with the first total wins, its rounds' outcomes ``(points, other side's
    points, count)`` rows of ``outcomes`` (taken from either side: they are counted both ways
    round here)."""
    if isinstance(target, bool) or not isinstance(target, (int, np.integer)) or target < 1:
        raise ValueError(f"target must be a positive int, got {target!r}")
    rows = np.asarray(outcomes, dtype=np.int64).reshape(-1, 3)
    if len(rows) == 0 or (rows < 0).any():
        raise ValueError("outcomes must be rows of non-negative (points, points, count)")
    both = np.concatenate([rows, rows[:, [1, 0, 2]]])
    both = both[(both[:, 0] + both[:, 1] > 0) & (both[:, 2] > 0)]  # nothing scored: no step
    if len(both) == 0:
        raise ValueError("no outcome scores any point")
    size = int(target) + MARGIN + 1
    table = np.zeros((size, size))
    weights = both[:, 2] / both[:, 2].sum()
    _fill(int(target), size, both[:, 0].copy(), both[:, 1].copy(), weights, table)
    return np.rint(table * EQUITY_SCALE).astype(np.int64)


def chance(equity: np.ndarray, mine: int, theirs: int) -> float:
    """The chance (0 to 1) an ``equity_table`` gives the side at ``mine`` against ``theirs``, the
    totals clipped to its last row and column (as the endgame search reads it)."""
    top = len(equity) - 1
    return float(equity[min(mine, top), min(theirs, top)]) / EQUITY_SCALE


def read_outcomes(table: str, path: Path = ROUND_POINTS_FILE) -> np.ndarray:
    """The measured outcomes of ``table`` (``"2p"`` or ``"4p_teams"``) as ``int64[n, 3]``."""
    if table not in TABLES:
        raise ValueError(f"table must be one of {sorted(TABLES)}, got {table!r}")
    data = json.loads(Path(path).read_text())
    return np.asarray(data[table]["outcomes"], dtype=np.int64).reshape(-1, 3)


@lru_cache(maxsize=16)
def game_equity(table: str, target: int) -> np.ndarray:
    """``equity_table`` of ``table``'s measured outcomes for ``target`` (cached; read-only)."""
    result = equity_table(target, read_outcomes(table))
    result.flags.writeable = False
    return result


def objective_table(players: int, teams: bool, scoring: Sequence[int], target: int) -> np.ndarray:
    """The table a search scores a round's end by with ``objective="game"``: ``game_equity``
    of two players or the team game where ``scoring`` (bastra, jack bastra and most-cards
    points) is ``MEASURED_SCORING``; else ``POINTS_ONLY`` (three players, other scoring rules:
    the round's points)."""
    two_sides = (players, bool(teams)) in ((2, False), (4, True))
    if not two_sides or [int(p) for p in scoring] != list(MEASURED_SCORING.values()):
        return POINTS_ONLY
    return game_equity("2p" if players == 2 else "4p_teams", int(target))
