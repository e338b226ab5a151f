"""Bastra, the Cypriot fishing card game, as a rules engine and RL environments."""

from .captures import legal_captures
from .cards import card_name, parse_card
from .game import Game, Move, RoundResult
from .rules import Rules

__version__ = "0.1.0"

__all__ = ["Game", "Move", "RoundResult", "Rules", "card_name", "legal_captures", "parse_card"]
