"""Honest evaluation: duplicate deals, Wilson intervals, round-robin ratings, curves, replays."""
