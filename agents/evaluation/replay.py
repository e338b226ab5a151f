"""Game records: every play of a finished game, with every hand, for replays.

A record is one JSON object (``RECORD_FORMAT``, ``RECORD_VERSION``): the rules, the game seed, the
players, each round's deck (top first, as dealt), and one step per play: who played, the action,
the card and what it took, the table just before the play (all hands, the board, the scores), and
for learned players what the network thought (its most probable actions and its value). The web
app (``agents.serve``) steps through records; ``python -m agents.evaluate ... --record DIR`` and
the app's own finished games write them.

A record only ever describes a finished game: by then every card of every round has been played
face up, so it shows nothing a seat could not have worked out from the plays.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

import numpy as np

from bastra_env import Rules, card_name, parse_card, raw_env

RECORD_FORMAT = "bastra-record"
RECORD_VERSION = 1
TOP_ACTIONS = 5
"""Actions shown with their probability beside a learned player's move."""

Explanation = dict[str, Any]
Move = tuple[int, int, "Explanation | None"]
"""(seat, action, explanation or ``None``): one play as the record builder takes it."""


def explain(policy: Any, observation: np.ndarray, action_mask: np.ndarray) -> Explanation | None:
    """A learned policy's view of one decision: ``{"value": v, "probs": {action: p}}`` for its
    ``TOP_ACTIONS`` most probable actions; ``None`` for players without a network."""
    if not hasattr(policy, "explain_batch"):
        return None
    probs, values = policy.explain_batch(
        np.asarray(observation)[None], np.asarray(action_mask)[None]
    )
    return explanation_of(probs[0], float(values[0]))


def explanation_of(probs: np.ndarray, value: float) -> Explanation:
    top = np.argsort(-probs, kind="stable")[:TOP_ACTIONS]
    return {
        "value": round(value, 4),
        "probs": {int(a): round(float(probs[a]), 4) for a in top if probs[a] > 0},
    }


def by_card(cards: Iterable[str]) -> list[str]:
    """Card names in card order (``A`` to ``K``, clubs to spades within a rank)."""
    return sorted(cards, key=parse_card)


def step_play(env: Any, action: int) -> dict[str, Any]:
    """Play ``action`` in the raw AEC env ``env`` and describe the play: the round it was made
    in, the seat, the card, what it took (card order), and the bastra it made (``"bastra"``,
    ``"jack"`` or ``None``)."""
    game = env.game
    seat, round_number = game.current, game.round
    card, takes = env.decode_action(action)
    bastras, jack_bastras = game.bastras[seat], game.jack_bastras[seat]
    env.step(action)
    kind = (
        "jack" if game.jack_bastras[seat] > jack_bastras else
        "bastra" if game.bastras[seat] > bastras else None
    )  # fmt: skip
    return {"round": round_number, "seat": seat, "card": card, "takes": by_card(takes),
            "bastra": kind}  # fmt: skip


def seat_lists(per_seat: dict[str, Any], agents: Sequence[str]) -> list[Any]:
    return [per_seat[a] for a in agents]


def build_record(
    rules: Rules,
    game_seed: int,
    moves: Sequence[Move],
    players: Sequence[str],
    table: str | None = None,
    **meta: Any,
) -> dict[str, Any]:
    """Replay ``moves`` from game seed ``game_seed`` (the AEC env's ``reset(seed=game_seed)``)
    and write down the whole game. ``players[seat]`` names who sat there; ``meta`` keys are
    stored as they are. ``ValueError`` if a move is not its seat's, or not legal."""
    if len(players) != rules.num_players:
        raise ValueError(f"players names {len(players)} seats, the rules have {rules.num_players}")
    env = raw_env(rules=rules)
    env.reset(seed=int(game_seed))
    agents = env.possible_agents
    game = env.game
    assert game is not None
    rounds: list[dict[str, Any]] = []
    steps: list[dict[str, Any]] = []
    results: list[dict[str, Any]] = []
    for number, (seat, action, explanation) in enumerate(moves):
        if game.done:
            raise ValueError(f"move {number}: the game was already over")
        if env.agent_name_mapping[env.agent_selection] != seat:
            raise ValueError(
                f"move {number}: seat {seat} played, but it was {env.agent_selection}'s turn"
            )
        if not rounds or rounds[-1]["round"] != game.round:
            rounds.append(
                {
                    "round": game.round,
                    "dealer": game.dealer,
                    # the shuffled order, top first (turned jacks went on to the bottom)
                    "deck": [card_name(c) for c in game.deck[:52]],
                }
            )
        snapshot = env.snapshot()
        before = {
            "hands": seat_lists(snapshot["hands"], agents),
            "board": snapshot["board"],
            "deck_left": len(snapshot["deck"]),
            "captured": [len(cards) for cards in seat_lists(snapshot["captured"], agents)],
            "scores": list(game.scores),
        }
        policy = None
        if explanation is not None:
            policy = {
                "value": explanation["value"],
                "top": [_option(env, int(a), p) for a, p in explanation["probs"].items()],
            }
        results_before = len(game.results)
        play = step_play(env, int(action))
        step: dict[str, Any] = {"move": number, "round": play["round"], "seat": seat,
                                "action": int(action), "card": play["card"],
                                "takes": play["takes"], "before": before}  # fmt: skip
        if policy is not None:
            step["policy"] = policy
        step["bastra"] = play["bastra"]
        steps.append(step)
        if len(game.results) > results_before:
            results.append(dict(asdict(game.results[-1]), after_move=number))
    return {
        "format": RECORD_FORMAT,
        "version": RECORD_VERSION,
        "table": table,
        "rules": rules.to_dict(),
        "game_seed": int(game_seed),
        "players": [
            {"seat": s, "name": name, "side": rules.side_of(s)} for s, name in enumerate(players)
        ],
        "rounds": rounds,
        "steps": steps,
        "round_results": results,
        "final": {
            "done": game.done,
            "scores": list(game.scores),
            "winner": game.winner,
        },
        **meta,
    }


def _option(env: Any, action: int, prob: float) -> dict[str, Any]:
    card, takes = env.decode_action(action)
    return {"action": action, "card": card, "takes": by_card(takes), "prob": prob}


SAFE_NAME = re.compile(r"[^A-Za-z0-9_.-]+")


def safe_name(text: str) -> str:
    """A file-name-safe form of a policy name or path (``runs/x/final.pt``: ``runs_x_final.pt``)."""
    return SAFE_NAME.sub("_", text).strip("._") or "policy"


def write_record(record: dict[str, Any], path: str | Path) -> Path:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(record, separators=(",", ":")))
    tmp.replace(path)
    return path


def read_record(path: str | Path) -> dict[str, Any]:
    """Load and check a record; ``ValueError`` says what is wrong with a bad one."""
    path = Path(path)
    try:
        record = json.loads(path.read_text())
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise ValueError(f"{path} is not a readable game record ({error})") from None
    if not isinstance(record, dict) or record.get("format") != RECORD_FORMAT:
        raise ValueError(f"{path} is not a Bastra game record (no {RECORD_FORMAT!r} tag)")
    if record.get("version") != RECORD_VERSION:
        raise ValueError(
            f"{path} is record version {record.get('version')}, this code reads {RECORD_VERSION}"
        )
    return record
