"""A trained network as a policy, loaded from any checkpoint ``train.py`` writes."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import torch

from agents.learning.config import SearchConfig, search_preset
from agents.learning.features import action_inputs_batch
from agents.learning.network import PolicyValueNet, build_model, read_checkpoint
from agents.players.basic import Observation, legal_actions
from agents.players.heuristic import HeuristicPolicy
from agents.players.observation_kernels import batch_arrays
from agents.search.endgame import LAST_DEAL, solve
from agents.search.players import PIMCPolicy
from agents.search.positions import deal_fit, decision_seed, position_of
from bastra_env import Rules, raw_env
from bastra_env.layout import DECK_LEFT_SCALE, OFFSETS
from bastra_env.rules import table_of

_WARM = False
"""Whether ``LearnedPolicy.warm_up`` ran in this process."""


def endgame_rows(flat: np.ndarray, search: SearchConfig) -> np.ndarray:
    """``bool[B]``: the rows of flat observations ``[B, N]`` where ``search``'s endgame search
    applies (the deck holds no more than its last deal, or its last two with two-deal search)."""
    deck_left = np.rint(flat[:, OFFSETS["deck_left"].start] * DECK_LEFT_SCALE)
    last = LAST_DEAL if search.endgame_deals == 2 else 0
    return np.asarray(search.endgame & (deck_left <= last))


class LearnedPolicy:
    """A network as a player, with the search ``search`` describes around it
    (``agents.learning.config``; by default the endgame search on the last two deals, on the
    game's chance). Acts greedily (the most probable legal action) unless ``sample=True``; a
    sampling policy, as in training, never searches. ``seed``: its sampling generator and the
    PIMC search's stream. ``act_batch`` chooses for many observations with one forward pass."""

    def __init__(
        self,
        model: PolicyValueNet,
        search: SearchConfig | None = None,
        sample: bool = False,
        seed: int | None = None,
        name: str = "",
    ) -> None:
        if search is not None and not isinstance(search, SearchConfig):
            raise TypeError(f"search must be a SearchConfig, got {type(search).__name__}")
        self.model = model.eval()
        self.search = search or SearchConfig()
        """What this player searches (a frozen ``SearchConfig``)."""
        self.sample = sample
        self.pimc: PIMCPolicy | None = None
        """The PIMC search on inferred worlds, where ``search.infer_worlds`` asks for one."""
        if self.search.infer_worlds:
            self.pimc = PIMCPolicy(
                self.search.infer_worlds,
                seed=seed or 0,
                endgame=False,
                infer=True,
                opponent_model=self.search.opponent_model,
            )
        self.generator = torch.Generator().manual_seed(seed if seed is not None else 0)
        self.name = name or "learned"

    @property
    def move_model(self) -> str:
        """``"sampled"`` (from ``move_probabilities``) when sampling; ``"deterministic"`` with no
        PIMC search (the endgame search's worlds are seeded by the observation); ``"unknown"``
        with PIMC, whose worlds come from the player's own stream."""
        if self.sample:
            return "sampled"
        return "deterministic" if self.pimc is None else "unknown"

    @torch.no_grad()
    def move_probabilities(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        """``float64[B, 208]``: the network's probability of every action, the distribution a
        sampling player draws from (0 off the legal actions)."""
        obs, mask = batch_arrays(observations, masks)
        logits, _ = self._network(np.ascontiguousarray(obs, dtype=np.float32), mask)
        return torch.softmax(logits.double(), dim=-1).numpy()

    def warm_up(self) -> None:
        """Load the compiled kernels this policy's search plays with (numba's disk cache, or a
        compile the first time), so that its first searched move in a process takes no longer
        than the later ones: it plays the positions of one heuristic 2p game (the kernels are
        the same for every table) where each search applies, once a process. ``load_policy``
        calls it."""
        global _WARM
        if self.sample or not self.search.searches or _WARM:
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
        logits, _ = self._network(flat, mask)
        if self.sample:
            if len(flat) == 0:
                return np.empty(0, dtype=np.int64)
            probs = torch.softmax(logits, dim=-1)
            return torch.multinomial(probs, 1, generator=self.generator)[:, 0].numpy()
        chosen = torch.argmax(logits, dim=-1).numpy().astype(np.int64)
        search = self.search
        if not search.searches:
            return chosen
        observations, masks = np.asarray(observations), np.asarray(masks)
        searched = self._endgame_rows(flat)
        log_probs = torch.log_softmax(logits, dim=-1)
        for i in np.flatnonzero(mask.sum(axis=1) > 1):
            seen = {"observation": observations[i], "action_mask": masks[i]}
            scores = self._search_scores(seen, bool(searched[i]), log_probs[i])
            if scores:
                row = logits[i]  # ties go to the network's choice
                chosen[i] = max(scores, key=lambda a: (scores[a], float(row[a])))
        return chosen

    def _network(self, flat: np.ndarray, mask: np.ndarray) -> tuple[torch.Tensor, torch.Tensor]:
        """The network on flat float32 observations ``[B, N]`` and their masks: (logits
        ``[B, 208]``, values ``[B]``)."""
        actions, features = action_inputs_batch(flat, mask)
        return self.model(
            torch.from_numpy(flat), torch.from_numpy(actions), torch.from_numpy(features)
        )

    def _endgame_rows(self, flat: np.ndarray) -> np.ndarray:
        """``bool[B]``: the rows where this player's endgame search applies."""
        return endgame_rows(flat, self.search)

    def _search_scores(
        self, seen: Observation, endgame: bool, log_probs: torch.Tensor
    ) -> dict[int, float] | None:
        """What the search makes of each legal move (the move played is the best): the endgame
        search's values where ``endgame`` and it applies, else PIMC's values plus the network's
        log-probability times ``network_weight`` where this player runs PIMC; None where it
        does not search."""
        search = self.search
        if endgame:  # solve declines where it does not search
            solved = solve(seen, deals=search.endgame_deals, objective=search.objective,
                           infer=search.infer_worlds > 0,
                           model_weight=search.endgame_model_weight)  # fmt: skip
            if solved:
                return dict(solved)
        if self.pimc is None:
            return None
        values = self.pimc.action_values(seen, self.rollout_share(seen))
        weight = search.network_weight
        return {a: v + weight * float(log_probs[a]) for a, v in values.items()}

    @torch.no_grad()
    def move_values(self, observation: Observation) -> dict[int, float] | None:
        """What this player's search makes of each legal move at ``observation`` (the scores it
        chooses by: points of the round, or the chance of winning the game in the endgame), or
        None where it plays its network alone. The web app's coach shows them."""
        legal_actions(observation)
        obs, mask = batch_arrays(np.asarray(observation["observation"])[None],
                                 np.asarray(observation["action_mask"])[None])  # fmt: skip
        if self.sample or not self.search.searches or mask.sum() < 2:
            return None
        flat = np.ascontiguousarray(obs, dtype=np.float32)
        logits, _ = self._network(flat, mask)
        endgame = bool(self._endgame_rows(flat)[0])
        return self._search_scores(observation, endgame, torch.log_softmax(logits, dim=-1)[0])

    def rollout_share(self, observation: Observation) -> float:
        """The modelled rollouts' share of PIMC's values at this observation
        (``SearchConfig.rollout_share`` of the deal's fit, measured only where the shares
        differ)."""
        fit = None
        if self.pimc is not None and self.search.needs_fit():
            obs = np.asarray(observation["observation"])
            position, rules, cards, sizes = position_of(obs)
            fit = deal_fit(position, rules, cards, sizes, decision_seed(self.pimc.seed, obs))
        return self.search.rollout_share(fit)

    @torch.no_grad()
    def explain_batch(
        self, observations: np.ndarray, masks: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray]:
        """What the network thinks of each row: (action probabilities ``float32[B, 208]``, zero
        off the legal actions; the value head's estimate ``float32[B]``, in the reward's units,
        for the seat to move). Replays and the web app show them beside the moves."""
        obs, mask = batch_arrays(observations, masks)
        logits, values = self._network(np.ascontiguousarray(obs, dtype=np.float32), mask)
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
    search: SearchConfig | None = None,
    suffixes: Sequence[str] = (),
    sample: bool = False,
    seed: int | None = None,
    name: str = "",
) -> LearnedPolicy:
    """The learned player of a checkpoint file (``final.pt``, a periodic one) or of a packaged
    model by name (``"bastra_2p"``, ``"bastra_4p_teams"``), warmed up. ``search=None``: the
    preset of the table the model was trained for under the spec's ``suffixes``
    (``search_preset``)."""
    path = checkpoint_path(path)
    payload = read_checkpoint(path)
    if search is None:
        search = search_preset(trained_table(payload), suffixes)
    elif suffixes:
        raise ValueError(f"give search= or suffixes {list(suffixes)}, not both")
    policy = LearnedPolicy(
        build_model(payload), search, sample=sample, seed=seed, name=name or Path(path).stem
    )
    policy.warm_up()
    return policy


def trained_table(payload: dict[str, Any]) -> str | None:
    """The name in ``bastra_env.rules.TABLES`` of the table a checkpoint was trained for
    (``None``: another table, or a checkpoint that does not say)."""
    fields = payload.get("rules")
    if not isinstance(fields, dict):
        return None
    try:
        return table_of(Rules.from_dict(fields))
    except (TypeError, ValueError):
        return None
