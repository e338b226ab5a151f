"""Search players: perfect-information Monte Carlo (PIMC) and single-observer information-set MCTS.

Both decide from one seat's observation alone (what it holds, sees and has seen captured; never a
hidden card: ``tests/test_search.py`` swaps hidden cards and checks nothing changes). They rebuild
the position with that seat first (``position_of``), draw *determinizations* (the unseen cards
dealt at random to the other hands, by their sizes, and to the deck), and play on the real rules'
kernels to the end of the round (``agents.search_kernels``).

- ``PIMCPolicy`` (``pimc:64``): every legal action on the same ``samples`` determinizations, each
  played to the end of the round by the rollout policy; the best mean round point difference wins.
- ``ISMCTSPolicy`` (``ismcts:400``): ``iterations`` of SO-ISMCTS (one determinization per
  iteration, UCB1 over the moves legal in it, with availability counts), a rollout as the leaf's
  value; given a network (``prior=``), its policy is the root's PUCT prior. Plays the most visited.

Once the deck is empty, both play the exact endgame search (``agents.endgame``) where it applies.
A budget in milliseconds (``pimc:50ms``, ``ismcts:80ms``) searches in chunks until the time is up;
an iteration budget is deterministic: the same seed and observation give the same action.
"""

from __future__ import annotations

import hashlib
import re
import time
from functools import lru_cache
from typing import Any

import numpy as np

from bastra_env import Rules
from bastra_env import kernels as K
from bastra_env.cards import NUM_CARDS
from bastra_env.layout import DEAL_PLAYS, DECK_LEFT_SCALE, OFFSETS, SCORING_SCALES

from . import search_kernels as S
from .endgame import solve
from .policies import Observation, legal_actions

TABLE_SEATS = (2, 3, 4, 4)
"""Players per entry of the observation's ``table`` one-hot (the last: teams)."""
SLOT_OF = {2: (0, 1), 3: (0, 1, 3), 4: (0, 1, 2, 3)}
"""Seat offset from me -> observation slot (as ``bastra_env.layout.RELATIVE_SLOTS``)."""
SPEC = re.compile(r"^(pimc|ismcts):(\d+)(ms)?(?::(.+))?$")
"""``kind:budget[ms][:prior]``, e.g. ``pimc:64``, ``ismcts:400``, ``ismcts:80ms:bastra_2p``."""


def _plane(obs: np.ndarray, name: str, slot: int = 0) -> int:
    piece = obs[OFFSETS[name]][slot * NUM_CARDS : (slot + 1) * NUM_CARDS]
    mask = 0
    for c in np.flatnonzero(piece > 0.5):
        mask |= 1 << int(c)
    return mask


@lru_cache(maxsize=64)
def _rules_row(
    players: int, teams: bool, target: int, scoring: tuple[int, int, int, bool]
) -> np.ndarray:
    rules = Rules(
        num_players=players,
        teams=teams,
        target_score=target,
        bastra_points=scoring[0],
        jack_bastra_points=scoring[1],
        most_cards_points=scoring[2],
        last_play_bastra=scoring[3],
    )
    return K.rules_array(rules)


def position_of(observation: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The position a flat observation shows, its seat as seat 0: ``(state, rules, unseen,
    sizes)``: a kernels' state row with no card of the other hands or the deck in it (the plays
    since the latest deal included), the rules
    row (captures chosen; the scoring rules as observed), the unseen cards, and every seat's hand
    size. ``ValueError`` if it is not this seat's turn."""
    obs = np.asarray(observation, dtype=np.float64)
    table = int(np.argmax(obs[OFFSETS["table"]]))
    n, teams = TABLE_SEATS[table], table == 3
    slots = SLOT_OF[n]
    piece = obs[OFFSETS["rules"]]
    scoring = tuple(
        round(float(piece[i]) * scale) for i, scale in enumerate(SCORING_SCALES.values())
    )
    target = round(float(obs[OFFSETS["target"]][0]) * 100)
    rules = _rules_row(n, teams, target, (*scoring, bool(piece[3] > 0.5)))
    state = np.zeros(K.STATE_SIZE, dtype=np.int64)
    sizes = np.zeros(n, dtype=np.int64)
    for k in range(n):
        slot = slots[k]
        sizes[k] = round(float(obs[OFFSETS["hand_sizes"]][slot]) * 4)
        state[K.CAPTURED + k] = _plane(obs, "captured", slot)
        state[K.BASTRAS + k] = round(float(obs[OFFSETS["bastras"]][slot]) * 4)
        side = k % 2 if teams else k
        state[K.SCORES + side] = round(float(obs[OFFSETS["scores"]][slot]) * target)
    state[K.HANDS] = _plane(obs, "hand")
    state[K.BOARD] = _plane(obs, "board")
    left = round(float(obs[OFFSETS["deck_left"]][0]) * DECK_LEFT_SCALE)
    state[K.DECK_LEN] = NUM_CARDS
    state[K.DECK_POS] = NUM_CARDS - left
    state[K.PLAYS] = round(float(obs[OFFSETS["plays"]][0]) * K.PLAYS_PER_ROUND)
    state[K.ROUND] = max(1, round(float(obs[OFFSETS["round"]][0]) * 10))
    dealer_slot = int(np.argmax(obs[OFFSETS["dealer"]]))
    state[K.DEALER] = slots.index(dealer_slot)
    last = obs[OFFSETS["last_capturer"]]
    state[K.LAST_CAPTURER] = -1 if last[-1] > 0.5 else slots.index(int(np.argmax(last[:-1])))
    played = np.rint(obs[OFFSETS["deal_played"]] * DEAL_PLAYS).astype(np.int64) - 1
    taken = np.rint(obs[OFFSETS["deal_taken"]] * DEAL_PLAYS).astype(np.int64) - 1
    for card in np.flatnonzero(played >= 0):
        state[K.DEAL_CARDS + played[card]] = card
    for card in np.flatnonzero(taken >= 0):
        state[K.DEAL_CAPTURES + taken[card]] |= 1 << int(card)
    state[K.CURRENT] = 0
    state[K.WINNER] = -1
    state[K.LAST_SEAT] = -1
    state[K.LAST_CARD] = -1
    state[K.RES_LEFTOVER_SIDE] = -1
    unseen = _plane(obs, "unseen")
    cards = np.array([c for c in range(NUM_CARDS) if unseen >> c & 1], dtype=np.int64)
    if len(cards) != sizes[1:].sum() + left:
        raise ValueError(
            f"the observation shows {len(cards)} unseen cards for {sizes[1:].sum()} in hands "
            f"and {left} in the deck"
        )
    return state, rules, cards, sizes


def decision_seed(seed: int, observation: np.ndarray) -> np.ndarray:
    """The random stream of one decision: from the player's seed and the observation, so a
    decision does not depend on the ones before it."""
    digest = hashlib.sha256(np.asarray(observation, dtype=np.float32).tobytes()).digest()
    mixed = (int.from_bytes(digest[:8], "little") ^ (seed * 0x9E3779B97F4A7C15)) % (1 << 64)
    return np.array([mixed], dtype=np.uint64)


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
    ) -> None:
        if int(budget) < 1:
            raise ValueError(f"a search budget must be at least 1, got {budget}")
        self.budget = int(budget)
        self.milliseconds = milliseconds
        self.seed = int(seed) if seed is not None else 0
        self.endgame = endgame
        self.prior = prior
        self.name = f"{self.kind}:{self.budget}{'ms' if milliseconds else ''}"
        self.decisions = 0
        self.search_seconds = 0.0

    def act(self, observation: Observation, env: Any = None) -> int:
        legal = legal_actions(observation)
        if len(legal) == 1:
            return int(legal[0])
        if self.endgame:
            solved = solve(observation)
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
    (or milliseconds)."""

    kind = "pimc"

    def action_values(self, observation: Observation) -> dict[int, float]:
        obs = np.asarray(observation["observation"])
        position, rules, cards, sizes = position_of(obs)
        work = np.empty(S.WORK_SIZE, dtype=np.int64)
        base = position.copy()
        n = K.legal_slots(base, rules, work)
        actions = base[K.MOVE_ACTIONS : K.MOVE_ACTIONS + n].copy()
        sums = np.zeros(n)
        rng = decision_seed(self.seed, obs)
        samples = self._budget_loop(
            lambda step: S.pimc(position, rules, cards, sizes, step, rng, sums), chunk=8
        )
        values = sums / samples
        prior = self._prior(observation)
        if self.prior is not None:  # the network breaks near-ties: a point is worth 10x a nat
            values = values + 0.1 * np.log(np.maximum(prior[actions], 1e-9))
        return dict(zip(actions.tolist(), values.tolist(), strict=True))


class ISMCTSPolicy(_SearchPolicy):
    """Single-observer information-set MCTS (module docs); ``budget`` iterations (or
    milliseconds). ``exploration``: UCB1's constant on round points / 26; ``prior_weight``: the
    root's PUCT weight when a network prior is given."""

    kind = "ismcts"

    def __init__(
        self, *args: Any, exploration: float = 0.7, prior_weight: float = 1.0, **kwargs: Any
    ) -> None:
        super().__init__(*args, **kwargs)
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
    kind, budget, ms, model = match.groups()
    prior = None
    if model is not None:
        if load is None:
            from .learned import load_policy as load
        prior = load(model)
    cls = PIMCPolicy if kind == "pimc" else ISMCTSPolicy
    policy = cls(int(budget), milliseconds=bool(ms), seed=seed or 0, prior=prior)
    policy.name = spec
    return policy
