"""The rule variants (RULES.md, "Variants") as one frozen dataclass, checked when it is built."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

TIE_BREAKS = ("extra_rounds", "draw")
CAPTURE_MODES = ("choose", "auto")


@dataclass(frozen=True, slots=True)
class Rules:
    """One Bastra variant. The defaults are the game of RULES.md."""

    num_players: int = 2
    """2, 3 or 4 players (R3)."""
    teams: bool = False
    """4 players only: seats 0+2 play against seats 1+3 (R3)."""
    target_score: int = 100
    """A side with at least this many points and more than every other side wins (R17)."""
    max_rounds: int | None = None
    """Stop after this many rounds even below the target; the highest score wins, a tie is a draw.
    It also caps the extra rounds of ``tie_break="extra_rounds"``."""
    tie_break: str = "extra_rounds"
    """A tie for the top at or past the target: play on ("extra_rounds") or a "draw" (R17)."""
    capture: str = "choose"
    """"choose": the player picks among the maximal captures (R9); "auto": the engine takes the one
    with the most cards, then the most points, then the lowest card mask."""
    bastra_points: int = 10
    """Clearing the board with a card other than a jack (R12)."""
    jack_bastra_points: int = 50
    """A jack taking a board that holds one card, a jack (R12)."""
    last_play_bastra: bool = True
    """Whether clearing the board on the 48th play of a round scores a bastra (either kind)."""
    most_cards_points: int = 3
    """Paid to each side tied for the most captured cards in a round (R15)."""

    def __post_init__(self) -> None:
        def need_int(name: str, low: int) -> None:
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int):
                raise TypeError(
                    f"Rules.{name} must be an int, got {type(value).__name__} {value!r}"
                )
            if value < low:
                raise ValueError(f"Rules.{name} must be at least {low}, got {value}")

        def need_bool(name: str) -> None:
            value = getattr(self, name)
            if not isinstance(value, bool):
                raise TypeError(f"Rules.{name} must be True or False, got {value!r}")

        def need_choice(name: str, choices: tuple[str, ...]) -> None:
            value = getattr(self, name)
            if value not in choices:
                raise ValueError(f"Rules.{name} must be one of {choices}, got {value!r}")

        need_int("num_players", 2)
        if self.num_players > 4:
            raise ValueError(f"Rules.num_players must be 2, 3 or 4, got {self.num_players}")
        need_bool("teams")
        if self.teams and self.num_players != 4:
            raise ValueError(
                f"Rules.teams needs num_players=4 (partners sit opposite), got num_players="
                f"{self.num_players}"
            )
        need_int("target_score", 1)
        if self.max_rounds is not None:
            need_int("max_rounds", 1)
        need_choice("tie_break", TIE_BREAKS)
        need_choice("capture", CAPTURE_MODES)
        need_int("bastra_points", 0)
        need_int("jack_bastra_points", 0)
        need_bool("last_play_bastra")
        need_int("most_cards_points", 0)

    @classmethod
    def from_dict(cls, fields: dict[str, Any]) -> Rules:
        """Build from a mapping, naming any unknown field and the valid ones."""
        unknown = sorted(set(fields) - set(FIELD_NAMES))
        if unknown:
            raise TypeError(
                f"unknown Rules field(s) {unknown}; valid fields are {list(FIELD_NAMES)}"
            )
        return cls(**fields)

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    # Derived seating facts, used on every play: computed once per Rules object.
    @property
    def num_sides(self) -> int:
        return 2 if self.teams else self.num_players

    def side_of(self, seat: int) -> int:
        """The side (R3) a seat scores for: the seat itself, or ``seat % 2`` in the team game."""
        return seat % 2 if self.teams else seat


FIELD_NAMES: tuple[str, ...] = tuple(f.name for f in dataclasses.fields(Rules))

TABLES: dict[str, dict[str, Any]] = {
    "2p": {"num_players": 2},
    "4p_teams": {"num_players": 4, "teams": True},
}
"""The two tables the project trains, rates and serves, by name: the ``Rules`` fields that make
them (the rest at their defaults)."""


def table_of(rules: Rules) -> str | None:
    """The name in ``TABLES`` of the table ``rules`` seat (``None``: 3 players, or 4 without
    teams)."""
    for name, fields in TABLES.items():
        if all(getattr(rules, key) == value for key, value in fields.items()) and (
            rules.teams == fields.get("teams", False)
        ):
            return name
    return None
