"""Many games of Bastra stepped in one call, from the compiled kernels.

    from bastra_env.vector import VectorEnv

    venv = VectorEnv(num_envs=1024, num_players=2, seed=0)    # any Rules field, or rules=Rules(...)
    state = venv.reset(seed=0)                  # or options={"decks": [[52 card names], ...]}
    state = venv.step(actions)                  # int array [num_envs]: one action per game

``state`` is a dict of arrays, index ``i`` being game ``i``:

=====================  =========================================================================
``observation``        float32 ``[num_envs, OBSERVATION_SIZE]``: the AEC env's observation of the
                       seat to move (same layout, ``bastra_env.layout``)
``action_mask``        bool ``[num_envs, 208]``: its legal actions (the AEC env's actions)
``current_player``     int64 ``[num_envs]``: the seat to move
``rewards``            float32 ``[num_envs, num_players]``: what the last step paid every seat, as
                       the AEC env's rewards (``reward="win"`` or ``"points"``)
``terminated``         bool ``[num_envs]``: the last step ended that game
``truncated``          bool ``[num_envs]``: always False (a game always ends by the rules)
``illegal``            bool ``[num_envs]``: the last step's action was illegal (that game ended)
``winner``             int64 ``[num_envs]``: where ``terminated``, the finished game's winning
                       side (-1: a draw, or an illegal action); else -1
``final_scores``       int64 ``[num_envs, num_players]``: where ``terminated``, the finished game's
                       score of every seat (its side's score: partners show the same); else 0
``round_ended``        bool ``[num_envs]``: the last step ended a round
``game_seed``          int64 ``[num_envs]``: the seed of the game now in each slot
=====================  =========================================================================

Same-step autoreset: the step in which a game ends reports its ``rewards``, ``terminated``,
``winner`` and ``final_scores``, and its ``observation``, ``action_mask`` and ``current_player``
already belong to that slot's next game.

Seeding rule: game ``k`` (0, 1, ...) of slot ``i`` after ``reset(seed=s)`` has the game seed
:func:`game_seed` ``(s, i, k)``, and is the same game, play for play, as the AEC env after
``reset(seed=game_seed(s, i, k))`` given the same actions. With ``options={"decks": d}`` the
first game of slot ``i`` deals round 1 from ``d[i]``, as the AEC env after
``reset(seed=game_seed(s, i, 0), options={"deck": d[i]})``; later rounds and games are shuffled
from their seeds. ``options={"game_seeds": g}`` gives the first game of slot ``i`` the seed
``g[i]`` instead (duplicate evaluation plays one seed in two slots); later games follow the rule.

Threads: ``num_threads=N`` steps the games on ``N`` threads, each a contiguous share of the batch
(numba ``prange`` over the shares, ``parallel=True``, cached on disk like every kernel); ``None``,
the default, takes the cores this process may use (``os.sched_getaffinity``). A batch too small
to pay for a thread's hand-off (under ``ROWS_PER_THREAD`` games a thread) uses fewer. Every game
is stepped by the same code with its own state and scratch, so the results are the same, bit for
bit, for every ``N``.

Bad input: an action that is illegal for its game ends that game with -1 for every seat of the
offending side (0 for the others) and touches no other game; a wrong shape or dtype, or an action
out of ``[0, 208)``, raises ``ValueError`` and changes nothing.
"""

from __future__ import annotations

import os
import secrets
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import gymnasium
import numba
import numpy as np
from gymnasium import spaces
from gymnasium.vector import AutoresetMode
from gymnasium.vector.utils import batch_space
from numba import njit, prange
from threadpoolctl import threadpool_info, threadpool_limits

from . import compiled_rules as K
from .cards import NUM_CARDS, parse_deck
from .layout import (
    NUM_ACTIONS,
    OBSERVATION_SIZE,
    REWARD_MODES,
    SLOTS_PER_CARD,
    observation_high,
)
from .policy_names import named_opponents
from .rules import Rules

if TYPE_CHECKING:
    from .game import Game

SEED_MASK = (1 << 63) - 1
ROWS_PER_THREAD = 32
"""The fewest games a thread is given: below it, handing a share to another thread costs more than
it saves. A launch of the parallel kernels costs about 7 us; under ``2 * ROWS_PER_THREAD`` games
the plain kernels run instead (measured: 64 games 27 us a step plain, 22 us on two threads)."""


def available_cores() -> int:
    """The cores this process may run on (its CPU affinity, where the platform reports one)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def check_threads(num_threads: Any) -> int:
    """``num_threads`` as a count: ``None`` is :func:`available_cores`; else a positive int."""
    if num_threads is None:
        return available_cores()
    if isinstance(num_threads, bool) or not isinstance(num_threads, (int, np.integer)):
        raise TypeError(f"num_threads must be a positive int or None, got {num_threads!r}")
    if num_threads < 1:
        raise ValueError(f"num_threads must be a positive int or None, got {num_threads}")
    return int(num_threads)


@njit(cache=True)
def _game_seed(seed: int, slot: int, k: int) -> int:
    x = np.uint64(seed) ^ (np.uint64(slot) * np.uint64(0x9E3779B97F4A7C15))
    x, z = K.splitmix64(x)
    x = z ^ (np.uint64(k) * np.uint64(0xC2B2AE3D27D4EB4F))
    x, z = K.splitmix64(x)
    return np.int64(z >> np.uint64(1))


@njit(cache=True)
def _first_seeds(seed: int, count: int) -> np.ndarray:
    out = np.empty(count, dtype=np.int64)
    for i in range(count):
        out[i] = _game_seed(seed, i, 0)
    return out


def game_seed(seed: int, slot: int, k: int) -> int:
    """The game seed of game ``k`` of slot ``slot`` after ``reset(seed=seed)`` (module docs)."""
    return int(_game_seed(int(seed) & SEED_MASK, int(slot), int(k)))


@njit(cache=True, nogil=True)
def _start(
    states: np.ndarray,
    rules: np.ndarray,
    seeds: np.ndarray,
    decks: np.ndarray,
    work: np.ndarray,
    obs: np.ndarray,
    mask: np.ndarray,
    current: np.ndarray,
) -> None:
    """Start a game with seed ``seeds[i]`` in every slot (round 1 from ``decks[i]`` if given)."""
    empty = np.empty(0, dtype=np.int64)
    for i in range(states.shape[0]):
        s = states[i]
        seed = seeds[i]
        if decks.shape[0] > 0:
            K.new_game(s, rules, seed, decks[i])
        else:
            K.new_game(s, rules, seed, empty)
        K.legal_slots(s, rules, work)
        current[i] = s[K.CURRENT]
        K.encode(s, rules, s[K.CURRENT], obs[i], mask[i])


@njit(cache=True, nogil=True)
def _step(
    states: np.ndarray,
    rules: np.ndarray,
    rows: np.ndarray,
    actions: np.ndarray,
    points_mode: int,
    base_seed: int,
    games: np.ndarray,
    work: np.ndarray,
    obs: np.ndarray,
    mask: np.ndarray,
    current: np.ndarray,
    rewards: np.ndarray,
    terminated: np.ndarray,
    illegal: np.ndarray,
    winner: np.ndarray,
    final_scores: np.ndarray,
    round_ended: np.ndarray,
    seeds: np.ndarray,
) -> None:
    """Play ``actions[r]`` in game ``rows[r]`` for each r; same-step autoreset."""
    n = rules[K.R_PLAYERS]
    empty = np.empty(0, dtype=np.int64)
    for r in range(rows.shape[0]):
        i = rows[r]
        s = states[i]
        action = actions[r]
        for seat in range(n):
            rewards[i, seat] = 0.0
        terminated[i] = False
        illegal[i] = False
        winner[i] = -1
        round_ended[i] = False
        move = K.find_move(s, action)
        if move < 0:
            side = K.side_of(rules, s[K.CURRENT])
            for seat in range(n):
                if K.side_of(rules, seat) == side:
                    rewards[i, seat] = -1.0
            illegal[i] = True
            terminated[i] = True
        else:
            ended = K.apply_move(s, rules, action // SLOTS_PER_CARD, s[K.MOVE_CAPTURES + move])
            if ended:
                round_ended[i] = True
                K.step_rewards(s, rules, points_mode, rewards[i])
                if s[K.DONE]:
                    terminated[i] = True
                    winner[i] = s[K.WINNER]
        if terminated[i]:
            for seat in range(n):
                final_scores[i, seat] = s[K.SCORES + K.side_of(rules, seat)]
            games[i] += 1
            seed = _game_seed(base_seed, i, games[i])
            seeds[i] = seed
            K.new_game(s, rules, seed, empty)
        K.legal_slots(s, rules, work)
        current[i] = s[K.CURRENT]
        K.encode(s, rules, s[K.CURRENT], obs[i], mask[i])


@njit(cache=True, nogil=True)
def _step_rows_of(
    lo: int, hi: int, work: np.ndarray, states: np.ndarray, rules: np.ndarray, rows: np.ndarray,
    actions: np.ndarray, points_mode: int, base_seed: int, games: np.ndarray, obs: np.ndarray,
    mask: np.ndarray, current: np.ndarray, rewards: np.ndarray, terminated: np.ndarray,
    illegal: np.ndarray, winner: np.ndarray, final_scores: np.ndarray, round_ended: np.ndarray,
    seeds: np.ndarray,
) -> None:  # fmt: skip
    """:func:`_step` on the share ``rows[lo:hi]``."""
    _step(states, rules, rows[lo:hi], actions[lo:hi], points_mode, base_seed, games, work, obs,
          mask, current, rewards, terminated, illegal, winner, final_scores, round_ended,
          seeds)  # fmt: skip


@njit(cache=True, nogil=True, parallel=True)
def _step_shares(
    bounds: np.ndarray, works: np.ndarray, states: np.ndarray, rules: np.ndarray,
    rows: np.ndarray, actions: np.ndarray, points_mode: int, base_seed: int, games: np.ndarray,
    obs: np.ndarray, mask: np.ndarray, current: np.ndarray, rewards: np.ndarray,
    terminated: np.ndarray, illegal: np.ndarray, winner: np.ndarray, final_scores: np.ndarray,
    round_ended: np.ndarray, seeds: np.ndarray,
) -> None:  # fmt: skip
    """:func:`_step` with share ``k`` (``rows[bounds[k]:bounds[k + 1]]``) on thread ``k``."""
    for k in prange(bounds.shape[0] - 1):
        _step_rows_of(bounds[k], bounds[k + 1], works[k], states, rules, rows, actions,
                      points_mode, base_seed, games, obs, mask, current, rewards, terminated,
                      illegal, winner, final_scores, round_ended, seeds)  # fmt: skip


@njit(cache=True, nogil=True)
def _start_rows_of(
    lo: int, hi: int, work: np.ndarray, states: np.ndarray, rules: np.ndarray,
    seeds: np.ndarray, decks: np.ndarray, obs: np.ndarray, mask: np.ndarray,
    current: np.ndarray,
) -> None:  # fmt: skip
    """:func:`_start` on the slots ``[lo, hi)``."""
    part = decks[lo:hi] if decks.shape[0] > 0 else decks
    _start(states[lo:hi], rules, seeds[lo:hi], part, work, obs[lo:hi], mask[lo:hi],
           current[lo:hi])  # fmt: skip


@njit(cache=True, nogil=True, parallel=True)
def _start_shares(
    bounds: np.ndarray, works: np.ndarray, states: np.ndarray, rules: np.ndarray,
    seeds: np.ndarray, decks: np.ndarray, obs: np.ndarray, mask: np.ndarray,
    current: np.ndarray,
) -> None:  # fmt: skip
    """:func:`_start` with share ``k`` of the slots on thread ``k``."""
    for k in prange(bounds.shape[0] - 1):
        _start_rows_of(bounds[k], bounds[k + 1], works[k], states, rules, seeds, decks, obs,
                       mask, current)  # fmt: skip


@njit(cache=True, nogil=True)
def _pick_rows_of(
    lo: int, hi: int, work: np.ndarray, mask: np.ndarray, uniform: np.ndarray, out: np.ndarray
) -> None:
    """:func:`random_legal` on the rows ``[lo, hi)`` (``work``, a share's scratch, unused)."""
    random_legal(mask[lo:hi], uniform[lo:hi], out[lo:hi])


@njit(cache=True, nogil=True, parallel=True)
def _pick_shares(
    bounds: np.ndarray, works: np.ndarray, mask: np.ndarray, uniform: np.ndarray, out: np.ndarray
) -> None:
    """:func:`random_legal` with share ``k`` of the rows on thread ``k``."""
    for k in prange(bounds.shape[0] - 1):
        _pick_rows_of(bounds[k], bounds[k + 1], works[k], mask, uniform, out)


_LAUNCH = threading.Lock()
"""Held around a parallel launch: numba's portable threading layer (workqueue) takes one launch
at a time, and ``numba.set_num_threads`` applies to the launching thread."""
_LAUNCHED_IN: list[int] = []
"""The process that first launched a parallel kernel (GNU OpenMP's threads do not survive a
fork: a forked child steps on one thread, with the same results)."""


def _launch(shares: Callable[..., None], one: Callable[..., None], bounds: np.ndarray,
            works: np.ndarray, *arrays: Any) -> None:  # fmt: skip
    """Run the parallel kernel ``shares`` on ``len(bounds) - 1`` threads, or its one-share
    form ``one`` for a batch too small to pay for the launch, or where the layer cannot run (a
    child forked from a process using GNU OpenMP). Every share gets the same code and its own
    scratch, so results never depend on which ran."""
    threads, size = len(bounds) - 1, int(bounds[-1])
    forked = bool(_LAUNCHED_IN) and _LAUNCHED_IN[0] != os.getpid()
    if size < 2 * ROWS_PER_THREAD or (forked and numba.threading_layer() == "omp"):
        one(0, size, works[0], *arrays)
        return
    start_threading_layer()
    with _LAUNCH:
        numba.set_num_threads(min(threads, numba.config.NUMBA_NUM_THREADS))  # type: ignore[attr-defined]
        shares(bounds, works, *arrays)
        if not _LAUNCHED_IN:
            _LAUNCHED_IN.append(os.getpid())


_STARTING = threading.Lock()
_LAYER_STARTED: list[bool] = []
"""Set once numba's threading layer is started (a forked child inherits the started layer)."""


def start_threading_layer() -> None:
    """Start numba's threading layer, keeping the process's OpenMP thread count; later calls
    return at once. The OpenMP layer, starting, sets that count to every core, and torch runs on
    the same count: a ``torch.set_num_threads(1)`` made before it would silently become every
    core (and crawl beside other work). Every parallel kernel of the project runs after it (the
    vector env's launches here; ``agents.evaluation.luck``'s walks call it)."""
    if _LAYER_STARTED:
        return
    with _STARTING:
        if _LAYER_STARTED:
            return
        counts = [pool["num_threads"] for pool in threadpool_info() if pool["user_api"] == "openmp"]
        numba.get_num_threads()  # starts the layer
        if counts:
            threadpool_limits(min(counts), user_api="openmp")
        _LAYER_STARTED.append(True)


class VectorEnv:
    """``num_envs`` games of one rule set, stepped together (see the module docs)."""

    def __init__(
        self,
        num_envs: int,
        num_players: int | None = None,
        seed: int | None = None,
        *,
        rules: Rules | None = None,
        reward: str = "win",
        copy: bool = True,
        num_threads: int | None = None,
        **rule_fields: Any,
    ) -> None:
        """``copy=False`` returns the env's own arrays from ``reset``/``step`` (overwritten by
        the next call: faster); ``copy=True`` returns fresh copies. ``num_threads``: the threads
        a step runs on (module docs; ``None``: every core this process may use)."""
        if isinstance(num_envs, bool) or not isinstance(num_envs, (int, np.integer)):
            raise TypeError(f"num_envs must be an int, got {type(num_envs).__name__}")
        if num_envs < 1:
            raise ValueError(f"num_envs must be at least 1, got {num_envs}")
        if num_players is not None:
            rule_fields["num_players"] = num_players
        if rules is not None and rule_fields:
            raise TypeError(
                f"pass rules=Rules(...) or Rules fields, not both: {sorted(rule_fields)}"
            )
        if rules is None:
            rules = Rules.from_dict(rule_fields)
        elif not isinstance(rules, Rules):
            raise TypeError(f"rules must be a Rules, got {type(rules).__name__}")
        if reward not in REWARD_MODES:
            raise ValueError(f"reward must be one of {REWARD_MODES}, got {reward!r}")
        self.num_envs = int(num_envs)
        self.num_threads = check_threads(num_threads)
        self.rules = rules
        self.num_players = rules.num_players
        self.reward_mode = reward
        self.copy = copy
        self._points = REWARD_MODES.index(reward)
        self._rules_row = K.rules_array(rules)
        b, n = self.num_envs, rules.num_players
        self.states = np.zeros((b, K.STATE_SIZE), dtype=np.int64)
        self._games = np.zeros(b, dtype=np.int64)
        self._works = np.stack([K.capture_work() for _ in range(self.num_threads)])
        self._all = np.arange(b, dtype=np.int64)
        self._seed = secrets.randbits(63) if seed is None else _check_seed(seed)
        self._arrays = {
            "observation": np.zeros((b, OBSERVATION_SIZE), dtype=np.float32),
            "action_mask": np.zeros((b, NUM_ACTIONS), dtype=np.bool_),
            "current_player": np.zeros(b, dtype=np.int64),
            "rewards": np.zeros((b, n), dtype=np.float32),
            "terminated": np.zeros(b, dtype=np.bool_),
            "truncated": np.zeros(b, dtype=np.bool_),
            "illegal": np.zeros(b, dtype=np.bool_),
            "winner": np.full(b, -1, dtype=np.int64),
            "final_scores": np.zeros((b, n), dtype=np.int64),
            "round_ended": np.zeros(b, dtype=np.bool_),
            "game_seed": np.zeros(b, dtype=np.int64),
        }
        self._mask_bytes = self._arrays["action_mask"].view(np.uint8)
        self._ready = False

    # ------------------------------------------------------------------------------ API
    def reset(
        self, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> dict[str, np.ndarray]:
        """Start a new game in every slot (module docs: seeding rule, ``decks`` option)."""
        decks = np.empty((0, NUM_CARDS), dtype=np.int64)
        if options and options.get("decks") is not None:
            given = options["decks"]
            if isinstance(given, (str, bytes)) or len(given) != self.num_envs:
                raise ValueError(
                    f"options['decks'] must hold one deck per game ({self.num_envs}), "
                    f"got {type(given).__name__}"
                    + (f" of length {len(given)}" if hasattr(given, "__len__") else "")
                )
            parsed = []
            for i, deck in enumerate(given):
                try:
                    parsed.append(parse_deck(deck))
                except (TypeError, ValueError) as error:
                    raise type(error)(f"options['decks'][{i}]: {error}") from None
            decks = np.array(parsed, dtype=np.int64)
        if seed is not None:
            self._seed = _check_seed(seed)
        elif self._ready:
            self._seed = secrets.randbits(63)
        first_seeds = None
        if options and options.get("game_seeds") is not None:
            first_seeds = np.asarray(options["game_seeds"])
            if first_seeds.shape != (self.num_envs,) or not np.issubdtype(
                first_seeds.dtype, np.integer
            ):
                raise ValueError(
                    f"options['game_seeds'] must be {self.num_envs} ints, one per game, got "
                    f"{first_seeds.dtype} {first_seeds.shape}"
                )
            first_seeds = first_seeds.astype(np.int64) & SEED_MASK
        self._games[:] = 0
        a = self._arrays
        if first_seeds is None:
            first_seeds = _first_seeds(self._seed, self.num_envs)
        _launch(_start_shares, _start_rows_of, self._bounds(self.num_envs), self._works,
                self.states, self._rules_row, first_seeds, decks, a["observation"],
                self._mask_bytes, a["current_player"])  # fmt: skip
        a["game_seed"][:] = first_seeds
        for name in ("rewards", "terminated", "truncated", "illegal", "round_ended"):
            a[name][:] = 0
        a["winner"][:] = -1
        a["final_scores"][:] = 0
        self._ready = True
        return self._out()

    def step(self, actions: Any) -> dict[str, np.ndarray]:
        """One action per game (int array ``[num_envs]``); see the module docs."""
        return self._step_rows(self._all, self._check_actions(actions, self.num_envs))

    def step_some(self, rows: Any, actions: Any) -> dict[str, np.ndarray]:
        """Step only the games ``rows`` (distinct indices), with ``actions[k]`` for game
        ``rows[k]``; the other games and their entries are left as they are."""
        rows = np.asarray(rows)
        if rows.ndim != 1 or not np.issubdtype(rows.dtype, np.integer):
            raise ValueError(f"rows must be a 1-D int array, got {rows.dtype} {rows.shape}")
        if rows.size and (rows.min() < 0 or rows.max() >= self.num_envs):
            raise ValueError(f"rows must lie in [0, {self.num_envs})")
        if np.unique(rows).size != rows.size:
            raise ValueError("rows must be distinct")
        return self._step_rows(rows.astype(np.int64), self._check_actions(actions, rows.size))

    def _step_rows(self, rows: np.ndarray, actions: np.ndarray) -> dict[str, np.ndarray]:
        if not self._ready:
            raise RuntimeError("call reset() before step()")
        a = self._arrays
        _launch(_step_shares, _step_rows_of, self._bounds(len(rows)), self._works, self.states,
                self._rules_row, rows, actions, self._points, self._seed, self._games,
                a["observation"], self._mask_bytes, a["current_player"], a["rewards"],
                a["terminated"], a["illegal"], a["winner"], a["final_scores"], a["round_ended"],
                a["game_seed"])  # fmt: skip
        return self._out()

    def sample_legal(self, rng: np.random.Generator | None = None) -> np.ndarray:
        """A uniformly random legal action of every game (``int64[num_envs]``), picked on the
        env's threads with one ``rng.random()`` draw per game: the same generator state gives the
        same actions for any ``num_threads``."""
        if not self._ready:
            raise RuntimeError("call reset() before sample_legal()")
        uniform = (np.random.default_rng() if rng is None else rng).random(self.num_envs)
        out = np.empty(self.num_envs, dtype=np.int64)
        _launch(_pick_shares, _pick_rows_of, self._bounds(self.num_envs), self._works,
                self._mask_bytes, uniform, out)  # fmt: skip
        return out

    def _bounds(self, size: int) -> np.ndarray:
        """Where each thread's contiguous share of ``size`` rows starts (and the last ends)."""
        shares = min(self.num_threads, max(1, size // ROWS_PER_THREAD))
        return np.array([size * k // shares for k in range(shares + 1)], dtype=np.int64)

    def _check_actions(self, actions: Any, size: int) -> np.ndarray:
        actions = np.asarray(actions)
        if actions.shape != (size,):
            raise ValueError(f"actions must have shape ({size},), got {actions.shape}")
        if not np.issubdtype(actions.dtype, np.integer):
            raise ValueError(f"actions must be an integer array, got dtype {actions.dtype}")
        if size and (actions.min() < 0 or actions.max() >= NUM_ACTIONS):
            bad = np.flatnonzero((actions < 0) | (actions >= NUM_ACTIONS))
            raise ValueError(
                f"actions must lie in [0, {NUM_ACTIONS}); out of range at games "
                f"{bad[:10].tolist()}: {actions[bad[:10]].tolist()}"
            )
        return actions.astype(np.int64, copy=False)

    def _out(self) -> dict[str, np.ndarray]:
        if self.copy:
            return {k: v.copy() for k, v in self._arrays.items()}
        return dict(self._arrays)

    # ------------------------------------------------------------------------------ reading
    def game(self, i: int) -> Game:
        """Game ``i`` as a :class:`~bastra_env.game.Game` (a copy: playing it changes nothing
        here; its ``results`` are empty, the env keeps no round history)."""
        from .game import Game

        return Game.from_state(self.rules, self.states[i], (), self._rules_row)

    def __repr__(self) -> str:
        return (
            f"VectorEnv(num_envs={self.num_envs}, rules={self.rules}, reward={self.reward_mode!r}, "
            f"num_threads={self.num_threads})"
        )


@njit(cache=True, nogil=True)
def random_legal(mask: np.ndarray, uniform: np.ndarray, out: np.ndarray) -> None:
    """``out[i]``: the legal action of ``mask[i]`` (uint8 or bool rows) at ``uniform[i]`` in
    [0, 1) of the way through the legal ones, ascending: a uniformly random legal action."""
    for i in range(mask.shape[0]):
        count = 0
        for a in range(mask.shape[1]):
            count += mask[i, a]
        k = int(uniform[i] * count)
        out[i] = -1
        for a in range(mask.shape[1]):
            if mask[i, a]:
                if k == 0:
                    out[i] = a
                    break
                k -= 1


class RandomBatchPolicy:
    """Uniformly random legal actions for a batch of observations, from a seeded generator."""

    def __init__(self, seed: int | None = None) -> None:
        self.rng = np.random.default_rng(seed)

    def act_batch(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        out = np.empty(len(masks), dtype=np.int64)
        random_legal(np.ascontiguousarray(masks).view(np.uint8), self.rng.random(len(masks)), out)
        if (out < 0).any():
            raise ValueError("a row of masks has no legal action")
        return out


def batch_actor(policy: Any) -> Any:
    """``(observations, masks) -> actions`` for a policy with ``act_batch``, ``act`` (called per
    row with the AEC observation dict) or a plain batch callable."""
    if hasattr(policy, "act_batch"):
        return policy.act_batch
    if hasattr(policy, "act"):

        def per_row(observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
            return np.array(
                [
                    policy.act({"observation": o, "action_mask": m.astype(np.int8)})
                    for o, m in zip(observations, masks, strict=True)
                ],
                dtype=np.int64,
            )

        return per_row
    if callable(policy):
        return policy
    raise TypeError(
        f"a policy needs act_batch(observations, masks), act(observation) or to be "
        f"callable, got {policy!r}"
    )


class GymVectorEnv(gymnasium.vector.VectorEnv):
    """Gymnasium's vector API for one learning seat per game against given opponents, who are
    stepped in batch inside (``gymnasium.make_vec("Bastra-v0", num_envs=...)`` builds it).

    ``opponents``: one policy for every other seat, or a ``{seat: policy}`` mapping; a policy has
    ``act_batch(observations, masks)`` (``agents``' policies do), or ``act(observation)``, or is a
    callable ``(observations, masks) -> actions``, or a player's name (``"heuristic"``,
    ``"bastra_2p:network"``: ``bastra_env.policy_names``); ``None`` plays uniformly random legal
    actions.
    ``seat``: the learner's seat, or ``None`` for a random seat in each game. Same-step autoreset:
    where ``terminated``, the observation already belongs to the slot's next game (a finished game
    has no further observation to bootstrap from, so none is reported). ``infos`` holds
    ``action_mask`` (bool ``[num_envs, 208]``, also :meth:`action_masks`), ``seat`` and
    ``illegal`` (the learner's action was illegal: that game ended with -1 for its side).
    ``num_threads``: the inner :class:`VectorEnv`'s threads (``None``: every core)."""

    # not a ClassVar: gymnasium.vector.VectorEnv declares metadata an instance attribute
    metadata: dict[str, Any] = {"autoreset_mode": AutoresetMode.SAME_STEP}  # noqa: RUF012

    def __init__(
        self,
        num_envs: int = 8,
        rules: Rules | None = None,
        *,
        opponents: Any = None,
        seat: int | None = 0,
        reward: str = "win",
        seed: int | None = None,
        num_threads: int | None = None,
        **rule_fields: Any,
    ) -> None:
        self.venv = VectorEnv(num_envs, rules=rules, reward=reward, seed=seed, copy=False,
                              num_threads=num_threads, **rule_fields)  # fmt: skip
        self.rules = self.venv.rules
        n = self.rules.num_players
        if seat is not None and (isinstance(seat, bool) or seat not in range(n)):
            raise ValueError(f"seat must be None or a seat in 0..{n - 1}, got {seat!r}")
        self.seat = seat
        self.num_envs = self.venv.num_envs
        opponents = named_opponents(opponents)
        if isinstance(opponents, dict):
            unknown = sorted(set(opponents) - set(range(n)))
            if unknown:
                raise ValueError(f"opponents names seats {unknown} outside 0..{n - 1}")
            given = {s: opponents.get(s) for s in range(n)}
        else:
            given = dict.fromkeys(range(n), opponents)
        self._random = RandomBatchPolicy(seed)
        self._actors = {
            s: self._random.act_batch if p is None else batch_actor(p) for s, p in given.items()
        }
        self.single_observation_space = spaces.Box(
            low=0.0, high=observation_high(), shape=(OBSERVATION_SIZE,), dtype=np.float32
        )
        self.single_action_space = spaces.Discrete(NUM_ACTIONS)
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        self.action_space = batch_space(self.single_action_space, self.num_envs)
        self._learner = np.zeros(self.num_envs, dtype=np.int64)
        self._seat_rng = np.random.default_rng(seed)
        self._state: dict[str, np.ndarray] = {}

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[np.ndarray, dict[str, Any]]:
        if seed is not None:
            self._random.rng = np.random.default_rng(seed)
            self._seat_rng = np.random.default_rng(seed)
        self._state = self.venv.reset(seed=seed, options=options)
        self._choose_seats(np.arange(self.num_envs))
        reward = np.zeros(self.num_envs, dtype=np.float32)
        self._play_others(reward, np.zeros(self.num_envs, dtype=bool))
        return self._observe(np.zeros(self.num_envs, dtype=bool))

    def step(
        self, actions: Any
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        if not self._state:
            raise RuntimeError("call reset() before step()")
        state = self.venv.step(actions)
        rows = np.arange(self.num_envs)
        reward = state["rewards"][rows, self._learner].copy()
        terminated = state["terminated"].copy()
        illegal = state["illegal"].copy()
        self._choose_seats(np.flatnonzero(terminated))
        self._play_others(reward, terminated)
        observation, infos = self._observe(illegal)
        return observation, reward, terminated, np.zeros(self.num_envs, dtype=bool), infos

    def action_masks(self) -> np.ndarray:
        """The learner's legal actions in every game, bool ``[num_envs, 208]``."""
        return self._state["action_mask"].copy()

    def _choose_seats(self, rows: np.ndarray) -> None:
        if self.seat is None:
            self._learner[rows] = self._seat_rng.integers(self.rules.num_players, size=len(rows))
        else:
            self._learner[rows] = self.seat

    def _play_others(self, reward: np.ndarray, finished: np.ndarray) -> None:
        """Step the other seats, in batch per seat, until the learner is to move everywhere;
        adds the learner's rewards meanwhile to ``reward`` for games not ``finished``."""
        state = self._state = self.venv._out()
        while True:
            waiting = np.flatnonzero(state["current_player"] != self._learner)
            if waiting.size == 0:
                return
            seat = int(state["current_player"][waiting[0]])
            rows = waiting[state["current_player"][waiting] == seat]
            actions = self._actors[seat](state["observation"][rows], state["action_mask"][rows])
            state = self._state = self.venv.step_some(rows, actions)
            live = rows[~finished[rows]]
            reward[live] += state["rewards"][live, self._learner[live]]
            ended = rows[state["terminated"][rows]]
            finished[ended] = True
            self._choose_seats(ended)

    def _observe(self, illegal: np.ndarray) -> tuple[np.ndarray, dict[str, Any]]:
        state = self._state
        infos = {
            "action_mask": state["action_mask"].copy(),
            "seat": self._learner.copy(),
            "illegal": illegal,
        }
        return state["observation"].copy(), infos


def _check_seed(seed: Any) -> int:
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)):
        raise TypeError(f"seed must be an int or None, got {type(seed).__name__} {seed!r}")
    return int(seed) & SEED_MASK


__all__ = [
    "GymVectorEnv",
    "RandomBatchPolicy",
    "VectorEnv",
    "game_seed",
    "random_legal",
    "start_threading_layer",
]
