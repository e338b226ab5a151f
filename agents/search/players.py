"""Search players: perfect-information Monte Carlo (PIMC) and single-observer information-set MCTS.

Both decide from one seat's observation alone (what it holds, sees and has seen captured; never a
hidden card: ``tests/test_search.py`` swaps hidden cards and checks nothing changes). They rebuild
the position with that seat first (``position_of``), draw *determinizations* (the unseen cards
dealt at random to the other hands, by their sizes, and to the deck), and play on the real rules'
kernels to the end of the round (``agents.search.world_kernels``).

- ``PIMCPolicy`` (``pimc:64``): every legal action on the same ``samples`` determinizations, each
  played to the end of the round by the rollout policy; the best mean round point difference wins.
- ``ISMCTSPolicy`` (``ismcts:400``): ``iterations`` of SO-ISMCTS (one determinization per
  iteration, UCB1 over the moves legal in it, with availability counts), a rollout as the leaf's
  value; given a network (``prior=``), its policy is the root's PUCT prior. Plays the most visited.

With ``infer=True`` (``pimc:64:infer``), PIMC's determinizations are drawn in proportion to how
likely the other seats' plays of this deal were with those hands (``agents.search.positions``): a
hand that would have made a bastra its holder let pass is unlikely. Its rollouts then play the other
sides by the same opponent model, the heuristic player on each seat's own observation
(``opponent_model``), so the search weighs what they would do without seeing my hand.

Once the deck is empty, both play the exact endgame search (``agents.search.endgame``) where it
applies (with the opponent model, PIMC's endgame values each move half against the model).
A budget in milliseconds (``pimc:50ms``, ``ismcts:80ms``) searches in chunks until the time is up;
an iteration budget is deterministic: the same seed and observation give the same action.
"""

from __future__ import annotations

import re
import time
from typing import Any

import numpy as np

from agents.players.basic import Observation, legal_actions
from agents.search import world_kernels as S
from agents.search.endgame import OBJECTIVES, checked_model_weight, solve
from agents.search.endgame_kernels import POINTS_ONLY
from agents.search.equity import objective_table
from agents.search.positions import decision_seed, inferred_worlds, legal_moves, position_of
from bastra_env import compiled_rules as K

__all__ = ["ISMCTSPolicy", "PIMCPolicy", "decision_seed", "make_search_policy", "position_of"]

SPEC = re.compile(r"^(pimc|ismcts):(\d+)(ms)?(:infer)?(?::(.+))?$")
"""``kind:budget[ms][:infer][:prior]``, e.g. ``pimc:64``, ``ismcts:400``, ``pimc:64:infer``,
``ismcts:80ms:bastra_2p``."""


class _SearchPolicy:
    """What both search players share: the budget, the endgame, the prior, ``act_batch``."""

    kind = ""

    def __init__(
        self,
        budget: int = 64,
        milliseconds: bool = False,
        seed: int = 0,
        endgame: bool = True,
        prior: Any = None,
        infer: bool = False,
    ) -> None:
        if int(budget) < 1:
            raise ValueError(f"a search budget must be at least 1, got {budget}")
        self.budget = int(budget)
        self.milliseconds = milliseconds
        self.seed = int(seed) if seed is not None else 0
        self.endgame = endgame
        self.prior = prior
        self.infer = infer
        self.name = f"{self.kind}:{self.budget}{'ms' if milliseconds else ''}"
        if infer:
            self.name += ":infer"
        self.decisions = 0
        self.search_seconds = 0.0
        self.model_weight = 0.0
        """The endgame search's weight on the opponent model (``solve``'s ``model_weight``)."""

    def act(self, observation: Observation, env: Any = None) -> int:
        legal = legal_actions(observation)
        if len(legal) == 1:
            return int(legal[0])
        if self.endgame:
            solved = solve(observation, model_weight=self.model_weight)
            if solved:
                return max(solved, key=lambda a: (solved[a], -a))
        start = time.perf_counter()
        values = self.action_values(observation)
        self.search_seconds += time.perf_counter() - start
        self.decisions += 1
        return max(values, key=lambda a: (values[a], -a))

    def act_batch(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        """``act`` row by row (a search is one decision's work)."""
        return np.array(
            [
                self.act({"observation": o, "action_mask": m})
                for o, m in zip(observations, masks, strict=True)
            ],
            dtype=np.int64,
        )

    def action_values(self, observation: Observation) -> dict[int, float]:
        raise NotImplementedError

    def _prior(self, observation: Observation) -> np.ndarray:
        if self.prior is None:
            return np.zeros(208)
        probs, _ = self.prior.explain_batch(
            np.asarray(observation["observation"])[None],
            np.asarray(observation["action_mask"])[None],
        )
        return probs[0].astype(np.float64)

    def _budget_loop(self, run_chunk: Any, chunk: int) -> int:
        """Run the search in chunks: ``budget`` units, or chunks until ``budget`` ms passed."""
        done = 0
        if not self.milliseconds:
            while done < self.budget:
                step = min(chunk, self.budget - done)
                run_chunk(step)
                done += step
            return done
        deadline = time.perf_counter() + self.budget / 1000.0
        while True:
            run_chunk(chunk)
            done += chunk
            if time.perf_counter() >= deadline:
                return done


class PIMCPolicy(_SearchPolicy):
    """Perfect-information Monte Carlo with rollouts (module docs); ``budget`` determinizations
    (or milliseconds). ``opponent_model`` (by default with ``infer``): in the rollouts the other
    sides play the heuristic player on their own observations, the model the inference reads
    their plays by, rather than the rollout policy, which sees every hand of its world; and once
    the deck is empty the endgame search values each move half by minimax, half against that
    model (``model_weight``, by default ``MODEL_WEIGHT`` with the model, else 0: ``solve``'s).
    ``rollout_model_weight`` (with the model; 1 by default): a move's value is that weight times
    its mean over the modelled rollouts plus the rest times its mean over rollouts of the same
    worlds by the rollout policy on every seat (``action_values`` takes one for a call).
    ``objective``: what a rollout's end is worth, ``"points"`` (the default) the round's point
    difference, ``"game"`` 100 times my side's chance of winning the game from the totals it
    reached (``agents.search.equity``; two sides under the scoring the table was measured with, else
    the points) plus a hundredth of the point difference (``world_kernels.end_value``)."""

    kind = "pimc"

    def __init__(
        self,
        *args: Any,
        opponent_model: bool | None = None,
        objective: str = "points",
        model_weight: float | None = None,
        rollout_model_weight: float | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(*args, **kwargs)
        if objective not in OBJECTIVES:
            raise ValueError(f"objective must be one of {OBJECTIVES}, got {objective!r}")
        self.opponent_model = self.infer if opponent_model is None else bool(opponent_model)
        self.objective = objective
        self.model_weight = checked_model_weight(model_weight, self.opponent_model)
        self.rollout_model_weight = checked_rollout_model_weight(
            rollout_model_weight, self.opponent_model
        )
        """The modelled rollouts' share of a move's value (the rest: the rollout policy's)."""

    def action_values(
        self, observation: Observation, rollout_model_weight: float | None = None
    ) -> dict[int, float]:
        """Each legal action's value: its mean end value (``objective``) over the worlds, the
        modelled rollouts' and the rollout policy's weighed by ``rollout_model_weight`` (this
        policy's unless given)."""
        obs = np.asarray(observation["observation"])
        position, rules, cards, sizes = position_of(obs)
        actions = legal_moves(position, rules)
        n = len(actions)
        rng = self.decision_stream(obs)
        share = checked_rollout_model_weight(
            self.rollout_model_weight if rollout_model_weight is None else rollout_model_weight,
            self.opponent_model,
        )
        modelled_sums, plain_sums = np.zeros(n), np.zeros(n)
        equity = POINTS_ONLY
        if self.objective == "game":
            scoring = rules[[K.R_BASTRA, K.R_JACK_BASTRA, K.R_MOST_CARDS]].tolist()
            equity = objective_table(int(rules[K.R_PLAYERS]), bool(rules[K.R_TEAMS]), scoring,
                                     int(rules[K.R_TARGET]))  # fmt: skip

        def run(step: int) -> None:
            if self.infer:
                worlds = inferred_worlds(position, rules, cards, sizes, step, rng)
            else:
                worlds = S.uniform_worlds(position, cards, sizes, step, rng)
            self.value_worlds(position, rules, worlds, share, equity, modelled_sums, plain_sums)

        samples = self._budget_loop(run, chunk=8)
        values = (share * modelled_sums + (1 - share) * plain_sums) / samples
        prior = self._prior(observation)
        if self.prior is not None:  # the network breaks near-ties: a point is worth 10x a nat
            values = values + 0.1 * np.log(np.maximum(prior[actions], 1e-9))
        return dict(zip(actions.tolist(), values.tolist(), strict=True))

    def decision_stream(self, obs: np.ndarray) -> np.ndarray:
        """The random stream this decision's worlds are drawn from: ``decision_seed``'s stream,
        the one the yardsticks' moves were pinned with (not uniform; a uniform one measured
        within noise for the learned players: docs/experiments.md, "The search's random
        stream", whose experiment overrides this)."""
        return decision_seed(self.seed, obs)

    def value_worlds(
        self,
        position: np.ndarray,
        rules: np.ndarray,
        worlds: np.ndarray,
        share: float,
        equity: np.ndarray,
        modelled_sums: np.ndarray,
        plain_sums: np.ndarray,
    ) -> None:
        """Add each legal move's end value in each of ``worlds`` to the sums (``legal_slots``'
        order): the modelled rollouts' to ``modelled_sums`` where ``share > 0``, the rollout
        policy's to ``plain_sums`` where ``share < 1``."""
        if share > 0:
            S.pimc_worlds(position, rules, worlds, modelled_sums, True, equity)
        if share < 1:
            S.pimc_worlds(position, rules, worlds, plain_sums, False, equity)


class ISMCTSPolicy(_SearchPolicy):
    """Single-observer information-set MCTS (module docs); ``budget`` iterations (or
    milliseconds). ``exploration``: UCB1's constant on round points / 26; ``prior_weight``: the
    root's PUCT weight when a network prior is given."""

    kind = "ismcts"

    def __init__(
        self, *args: Any, exploration: float = 0.7, prior_weight: float = 1.0, **kwargs: Any
    ) -> None:
        super().__init__(*args, **kwargs)
        if self.infer:
            raise ValueError("inference (infer=True) is a PIMC option, not IS-MCTS's")
        self.exploration = exploration
        self.prior_weight = prior_weight

    def action_values(self, observation: Observation) -> dict[int, float]:
        obs = np.asarray(observation["observation"])
        position, rules, cards, sizes = position_of(obs)
        rng = decision_seed(self.seed, obs)
        capacity = self.budget + 1 if not self.milliseconds else 200_000
        links, stats = S.new_tree(capacity)
        prior = self._prior(observation)
        weight = self.prior_weight if self.prior is not None else 0.0
        used = [1]

        def run(step: int) -> None:
            used[0] = S.ismcts(position, rules, cards, sizes, step, rng, links, stats, used[0],
                               self.exploration, prior, weight)  # fmt: skip

        self._budget_loop(run, chunk=50)
        visits = S.root_visits(links, stats)
        means = S.root_means(links, stats)
        legal = legal_actions(observation)
        # most visited; the mean value breaks ties
        return {int(a): float(visits[a]) + 1e-3 * float(np.nan_to_num(means[a])) for a in legal}


def checked_rollout_model_weight(weight: float | None, opponent_model: bool) -> float:
    """A PIMC player's ``rollout_model_weight``: 1 where it models the other sides and none is
    given, 0 where it does not; ``ValueError`` outside [0, 1], or above 0 without the model."""
    if weight is None:
        return 1.0 if opponent_model else 0.0
    if not 0.0 <= weight <= 1.0:
        raise ValueError(f"rollout_model_weight must be in [0, 1], got {weight!r}")
    if weight > 0 and not opponent_model:
        raise ValueError(
            f"rollout_model_weight={weight!r} needs the opponent model (opponent_model=True)"
        )
    return float(weight)


def is_search_spec(spec: str) -> bool:
    return spec.startswith(("pimc:", "ismcts:"))


def make_search_policy(spec: str, seed: int | None = None, load: Any = None) -> Any:
    """``pimc:N`` / ``ismcts:N`` (N determinizations / iterations a decision), ``pimc:Nms`` /
    ``ismcts:Nms`` (a time budget a decision), either with ``:MODEL`` after it to guide the
    search with a network (a packaged model's name or a checkpoint path, loaded by ``load``).
    ``ValueError`` on anything else."""
    match = SPEC.match(spec)
    if match is None:
        raise ValueError(
            f"not a search player: {spec!r}; write pimc:N or ismcts:N (N determinizations or "
            "iterations a move), pimc:Nms for a time budget, and :MODEL after it for a network "
            "prior, e.g. pimc:64, ismcts:400, ismcts:80ms:bastra_2p"
        )
    kind, budget, ms, infer, model = match.groups()
    if infer and kind != "pimc":
        raise ValueError(f"{spec!r}: inference (:infer) is a PIMC option (pimc:64:infer)")
    prior = None
    if model is not None:
        if load is None:
            raise ValueError(
                f"{spec!r}: a network prior needs a loader (load=agents.registry.load_policy)"
            )
        prior = load(model)
    cls = PIMCPolicy if kind == "pimc" else ISMCTSPolicy
    policy = cls(int(budget), milliseconds=bool(ms), seed=seed or 0, prior=prior, infer=bool(infer))
    policy.name = spec
    return policy
