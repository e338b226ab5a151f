"""Round-robin tournaments and Bradley-Terry ratings with bootstrap intervals, and the Markdown
tables of their results."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from agents.evaluation.matches import MatchResult, duplicate_match
from agents.registry import make_policy, network_alone


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
    def make(spec: str, seed: int) -> Any:
        if endgame or network_alone(spec) == spec:
            return make_policy(spec, seed=seed)
        policy = make_policy(network_alone(spec), seed=seed)
        policy.name = spec
        return policy

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
    reduced = any(r.variance_reduced for r in results)
    if reduced:
        lines = [
            "| A | B | games | A win rate [95% CI] | mean point diff [95% CI] | plain win rate "
            "| plain point diff [95% CI] | decisions corrected (A, B) |",
            "| --- | --- | --- | --- | --- | --- | --- | --- |",
        ]
    else:
        lines = [
            "| A | B | games | A win rate [95% CI] | mean point diff |",
            "| --- | --- | --- | --- | --- |",
        ]
    for r in results:
        line = (
            f"| {r.a} | {r.b} | {r.games} | {r.win_rate:.1%} [{r.ci_low:.1%}, {r.ci_high:.1%}] "
            f"| {r.point_diff:+.2f} |"
        )
        if reduced:
            line = line[:-2] + (
                f" +/- {r.point_diff_ci:.2f} | {r.raw_win_rate:.1%} | {r.raw_point_diff:+.2f} "
                f"+/- {r.raw_point_diff_ci:.2f} | {r.decisions.get('a', '-')}, "
                f"{r.decisions.get('b', '-')} |"
            )
        lines.append(line)
    if ratings:
        lines += ["", "| policy | rating | 95% interval |", "| --- | --- | --- |"]
        for name, rating in sorted(ratings.items(), key=lambda item: -item[1]):
            low, high = (intervals or {}).get(name, (float("nan"), float("nan")))
            span = f"{low:.0f} to {high:.0f}" if intervals else ""
            lines.append(f"| {name} | {rating:.0f} | {span} |")
    return "\n".join(lines)


