"""A trained network as a policy, loaded from any checkpoint ``train.py`` writes."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import torch

from agents.learning.features import action_inputs_batch
from agents.learning.network import PolicyValueNet, build_model, read_checkpoint
from agents.players.basic import Observation, legal_actions
from agents.players.heuristic import HeuristicPolicy
from agents.players.kernels import batch_arrays
from agents.search.endgame import LAST_DEAL, OBJECTIVES, checked_model_weight, solve
from agents.search.players import PIMCPolicy, checked_rollout_model_weight
from agents.search.positions import deal_fit, decision_seed, position_of
from bastra_env import raw_env
from bastra_env.layout import DECK_LEFT_SCALE, OFFSETS

_WARM = False
"""Whether ``LearnedPolicy.warm_up`` ran in this process."""
NETWORK_WEIGHTS = (0.3, 0.1, 0.1, 0.1)
"""Where ``infer_worlds`` is set, the search's value of a move (round points) plus a weight times
the network's log-probability of it is what the policy maximises: the weight by the observation's
table (2, 3 and 4 players, 4 in teams), as measured in full games (the README's inference
section), unless ``network_weight`` sets one for every table."""


ROLLOUT_MODEL_WEIGHTS = ((1.0, 0.5), (1.0, 1.0), (1.0, 1.0), (1.0, 1.0))
"""Where ``infer_worlds`` is set, the modelled rollouts' share of the search's value of a move
(``agents.search.PIMCPolicy``'s ``rollout_model_weight``; the rest: rollouts of the same worlds
by the rollout policy on every seat), by the observation's table as ``NETWORK_WEIGHTS``: the
first where the other seats' plays of this deal fit the opponent model, the second where they
fit it worse than a uniform choice (``agents.search.positions.deal_fit`` under ``MISFIT``), unless
``rollout_model_weight`` sets one share for every table and deal (the README's inference
section)."""
MISFIT = -0.5
"""The log Bayes factor (``agents.search.positions.deal_fit``) under which the deal's plays fit the
opponent model worse than a uniform choice: uniform play at least 1.65 times likelier."""


def checked_network_weight(weight: float | None) -> float | None:
    """A ``network_weight`` as given (``None``: the table's ``NETWORK_WEIGHTS``); ``ValueError``
    unless it is a finite 0 or more."""
    if weight is not None and not 0 <= weight < float("inf"):
        raise ValueError(f"network_weight must be 0 or more (points a nat), got {weight!r}")
    return weight


class LearnedPolicy:
    """Acts greedily (the most probable legal action) unless ``sample=True``.

    With ``endgame=True`` (the default), where ``agents.search.endgame.solve`` applies (the deck is
    empty: two players, or the team game with at most three cards in hand; with
    ``endgame_deals=2``, the default, also the two-player last-but-one deal, on ``deal_samples``
    sampled deals) it plays the search's best move instead, the network breaking ties;
    ``endgame_deals=1`` searches the last deal only; ``endgame=False`` is the network alone.
    ``objective``: what the search maximises, ``"game"`` (the default) the chance of winning the
    game from the scores (``agents.search.equity``), ``"points"`` the round's point difference.
    ``infer_worlds`` > 0 (the ``MODEL:infer`` spec): where the endgame search does not apply, a
    PIMC search (``agents.search``) on that many worlds inferred from the deal's plays, the
    network's log-probability added to each move's value (``network_weight`` points a nat, by
    default ``NETWORK_WEIGHTS``: 0.3 in 2p, 0.1 in the other tables). Its rollouts play
    the other sides as the heuristic player, and once the deck is empty the endgame search values
    each move half by minimax, half against that model (``model_weight``: by default
    ``agents.search.endgame.MODEL_WEIGHT`` there, 0 elsewhere; ``solve``'s).
    ``opponent_model=False``: the rollout policy in the rollouts and minimax alone
    (``agents.search.PIMCPolicy``). That search scores its rollouts by the round's points whatever
    ``objective`` says (the game's chance there measured no better in full games; the README's
    inference section). ``infer``: the endgame search's samples inferred from the deal's plays too
    (``solve(infer=True)``; by default where ``infer_worlds`` is set). A sampling policy
    (``sample=True``, as in training) never searches. ``act_batch`` chooses for
    many observations with one forward pass."""

    def __init__(
        self,
        model: PolicyValueNet,
        sample: bool = False,
        seed: int | None = None,
        name: str = "",
        endgame: bool = True,
        endgame_deals: int = 2,
        deal_samples: int = 64,
        objective: str = "game",
        infer_worlds: int = 0,
        infer: bool | None = None,
        opponent_model: bool = True,
        model_weight: float | None = None,
        network_weight: float | None = None,
        rollout_model_weight: float | None = None,
    ) -> None:
        if infer_worlds < 0:
            raise ValueError(f"infer_worlds must be 0 (the network) or more, got {infer_worlds!r}")
        if endgame_deals not in (1, 2):
            raise ValueError(f"endgame_deals must be 1 or 2, got {endgame_deals!r}")
        if objective not in OBJECTIVES:
            raise ValueError(f"objective must be one of {OBJECTIVES}, got {objective!r}")
        self.network_weight = checked_network_weight(network_weight)
        """Points a nat of the network's log-probability beside PIMC's values; ``None``: the
        table's ``NETWORK_WEIGHTS``."""
        self.model = model.eval()
        self.sample = sample
        self.endgame = endgame
        self.endgame_deals = endgame_deals
        self.deal_samples = deal_samples
        self.objective = objective
        self.infer_worlds = infer_worlds
        self.infer = bool(infer_worlds) if infer is None else bool(infer)
        modelled = bool(infer_worlds) and opponent_model
        self.model_weight = checked_model_weight(model_weight, modelled)
        """The endgame search's weight on the opponent model (``solve``'s ``model_weight``)."""
        self.pimc: Any = None
        """The PIMC search on inferred worlds (``agents.search.PIMCPolicy``), or None."""
        if rollout_model_weight is not None:
            checked_rollout_model_weight(rollout_model_weight, opponent_model)
        self.rollout_model_weight = rollout_model_weight
        """The modelled rollouts' share of PIMC's values; ``None``: the table's
        ``ROLLOUT_MODEL_WEIGHTS`` (with ``opponent_model``, else 0)."""
        if infer_worlds:
            self.pimc = PIMCPolicy(infer_worlds, seed=seed or 0, endgame=False, infer=True,
                                    opponent_model=opponent_model)  # fmt: skip
        self.generator = torch.Generator().manual_seed(seed if seed is not None else 0)
        self.name = name or "learned"

    def warm_up(self) -> None:
        """Load the compiled kernels this policy's search plays with (numba's disk cache, or a
        compile the first time), so that its first searched move in a process takes no longer
        than the later ones: it plays the positions of one heuristic 2p game (the kernels are
        the same for every table) where each search applies, once a process. ``load_policy``
        calls it."""
        global _WARM
        if self.sample or not (self.endgame or self.pimc is not None) or _WARM:
            return
        env = raw_env(num_players=2)
        env.reset(seed=0)
        game = env.game
        assert game is not None  # reset made it
        heuristic, wanted = HeuristicPolicy(), {LAST_DEAL + 16, LAST_DEAL, 0}
        while wanted and not game.done:  # a later deal's position, then the last two deals'
            observation = env.observe(env.agent_selection)
            left = len(game.deck) - game.deck_pos
            played = observation["observation"][OFFSETS["deal_played"]].any()  # some to infer from
            if left in wanted and played and observation["action_mask"].sum() > 1:
                self.act(observation)
                wanted.discard(left)
            env.step(heuristic.act(observation))
        _WARM = True

    def act(self, observation: Observation, env: Any = None) -> int:
        legal_actions(observation)  # refuses an observation with no legal action
        observations = np.asarray(observation["observation"])[None]
        return int(self.act_batch(observations, np.asarray(observation["action_mask"])[None])[0])

    @torch.no_grad()
    def act_batch(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        """``int64[B]``: ``act`` of every row of ``observations [B, N]`` / ``masks [B, 208]``, the
        network run once on the whole batch (greedy, or sampled from this policy's generator,
        one draw per row; the endgame search, where on, row by row where it applies)."""
        obs, mask = batch_arrays(observations, masks)
        empty = np.flatnonzero(~mask.any(axis=1))
        if empty.size:
            raise ValueError(
                f"no legal action in row {int(empty[0])} of the masks: it is not that seat's turn"
            )
        flat = np.ascontiguousarray(obs, dtype=np.float32)
        actions, features = action_inputs_batch(flat, mask)
        logits, _ = self.model(
            torch.from_numpy(flat), torch.from_numpy(actions), torch.from_numpy(features)
        )
        if self.sample:
            if len(flat) == 0:
                return np.empty(0, dtype=np.int64)
            probs = torch.softmax(logits, dim=-1)
            return torch.multinomial(probs, 1, generator=self.generator)[:, 0].numpy()
        chosen = torch.argmax(logits, dim=-1).numpy().astype(np.int64)
        if not (self.endgame or self.pimc is not None):
            return chosen
        observations, masks = np.asarray(observations), np.asarray(masks)
        deck_left = np.rint(flat[:, OFFSETS["deck_left"].start] * DECK_LEFT_SCALE)
        searched = self.endgame & (deck_left <= (LAST_DEAL if self.endgame_deals == 2 else 0))
        log_probs = torch.log_softmax(logits, dim=-1)
        tables = flat[:, OFFSETS["table"]].argmax(axis=1)
        for i in np.flatnonzero(mask.sum(axis=1) > 1):
            seen = {"observation": observations[i], "action_mask": masks[i]}
            solved = None
            if searched[i]:  # solve declines where it does not search
                solved = solve(seen, deals=self.endgame_deals, deal_samples=self.deal_samples,
                               objective=self.objective, infer=self.infer,
                               model_weight=self.model_weight)  # fmt: skip
            row = logits[i]
            if solved:
                chosen[i] = max(solved, key=lambda a: (solved[a], float(row[a])))
            elif self.pimc is not None:
                table = int(tables[i])
                values = self.pimc.action_values(seen, self.rollout_weight_of(table, seen))
                row, weight = log_probs[i], self.weight_of(table)
                chosen[i] = max(values, key=lambda a: values[a] + weight * float(row[a]))
        return chosen

    def weight_of(self, table: int) -> float:
        """The network's weight (points a nat) beside PIMC's values at a table (the index of the
        observation's ``table`` one-hot)."""
        return NETWORK_WEIGHTS[table] if self.network_weight is None else self.network_weight

    def rollout_weight_of(self, table: int, observation: Observation | None = None) -> float:
        """The modelled rollouts' share of PIMC's values at a table (as ``weight_of``), for an
        observation where the table's share depends on how the deal's plays fit the model (the
        share where they fit without one)."""
        if self.pimc is None or not self.pimc.opponent_model:
            return 0.0
        if self.rollout_model_weight is not None:
            return self.rollout_model_weight
        fit, misfit = ROLLOUT_MODEL_WEIGHTS[table]
        if fit == misfit or observation is None:
            return fit
        obs = np.asarray(observation["observation"])
        position, rules, cards, sizes = position_of(obs)
        evidence = deal_fit(position, rules, cards, sizes, decision_seed(self.pimc.seed, obs))
        return misfit if evidence < MISFIT else fit

    @torch.no_grad()
    def explain_batch(
        self, observations: np.ndarray, masks: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray]:
        """What the network thinks of each row: (action probabilities ``float32[B, 208]``, zero
        off the legal actions; the value head's estimate ``float32[B]``, in the reward's units,
        for the seat to move). Replays and the web app show them beside the moves."""
        obs, mask = batch_arrays(observations, masks)
        flat = np.ascontiguousarray(obs, dtype=np.float32)
        actions, features = action_inputs_batch(flat, mask)
        logits, values = self.model(
            torch.from_numpy(flat), torch.from_numpy(actions), torch.from_numpy(features)
        )
        return torch.softmax(logits, dim=-1).numpy(), values.numpy()


PRETRAINED_DIR = Path(__file__).resolve().parents[1] / "pretrained"
PRETRAINED = ("bastra_2p", "bastra_4p_teams")
"""The packaged models, loadable by name from any working directory."""


def pretrained_path(name: str) -> Path:
    """The file of a packaged model (``bastra_2p``, ``bastra_4p_teams``)."""
    if name not in PRETRAINED:
        raise ValueError(f"no packaged model {name!r}: the packaged models are {list(PRETRAINED)}")
    return PRETRAINED_DIR / f"{name}.pt"


def checkpoint_path(spec: str | Path) -> Path:
    """The file a checkpoint spec names: a packaged model's name (unless a file of that name
    exists here), else the path itself."""
    if isinstance(spec, str) and spec in PRETRAINED and not Path(spec).exists():
        return pretrained_path(spec)
    return Path(spec)


def load_learned(
    path: str | Path,
    sample: bool = False,
    seed: int | None = None,
    endgame: bool = True,
    endgame_deals: int = 2,
    objective: str = "game",
    infer_worlds: int = 0,
    infer: bool | None = None,
    model_weight: float | None = None,
    network_weight: float | None = None,
    rollout_model_weight: float | None = None,
) -> LearnedPolicy:
    """The learned policy of a checkpoint file (``final.pt``, a periodic one) or of a packaged
    model by name (``"bastra_2p"``, ``"bastra_4p_teams"``), warmed up."""
    path = checkpoint_path(path)
    payload = read_checkpoint(path)
    policy = LearnedPolicy(
        build_model(payload),
        sample=sample,
        seed=seed,
        name=Path(path).stem,
        endgame=endgame,
        endgame_deals=endgame_deals,
        objective=objective,
        infer_worlds=infer_worlds,
        infer=infer,
        model_weight=model_weight,
        network_weight=network_weight,
        rollout_model_weight=rollout_model_weight,
    )
    policy.warm_up()
    return policy
