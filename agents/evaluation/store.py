"""The local store of ratings: every match ``bastra rate`` plays and every rating it fits, in one
SQLite file (the standard library's ``sqlite3``), so a rating is extended later rather than
replayed, and the web app's leaderboard can show what was rated.

The file is ``$BASTRA_RATINGS`` if set, else ``~/.bastra/ratings.sqlite``; ``--store PATH`` picks
another. Each batch of games and the rating it leads to are written in one transaction: a run
stopped midway leaves the batches it finished and nothing half written.
"""

from __future__ import annotations

import json
import os
import sqlite3
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

SCHEMA = """
CREATE TABLE IF NOT EXISTS matches (
    id INTEGER PRIMARY KEY,
    identity TEXT NOT NULL,      -- the policy's name, with its file's digest for a checkpoint
    policy TEXT NOT NULL,
    table_name TEXT NOT NULL,
    ladder TEXT NOT NULL,        -- the ladder's version
    opponent TEXT NOT NULL,
    seed INTEGER NOT NULL,       -- deal d is game seed seed + d
    deals INTEGER NOT NULL,
    raw_win_values TEXT NOT NULL,     -- JSON: the policy's result of each deal (two games)
    win_corrections TEXT NOT NULL,    -- JSON: what luck contributed to it (the value function)
    raw_point_values TEXT NOT NULL,   -- the same for the point difference
    point_corrections TEXT NOT NULL,
    package_version TEXT NOT NULL,
    created REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS ratings (
    identity TEXT NOT NULL,
    policy TEXT NOT NULL,
    table_name TEXT NOT NULL,
    ladder TEXT NOT NULL,
    rating REAL NOT NULL,
    ci REAL NOT NULL,
    games INTEGER NOT NULL,
    updated REAL NOT NULL,
    PRIMARY KEY (identity, table_name, ladder)
);
"""


def default_store_path() -> Path:
    return Path(os.environ.get("BASTRA_RATINGS", Path.home() / ".bastra" / "ratings.sqlite"))


@dataclass(frozen=True)
class StoredMatch:
    opponent: str
    seed: int
    deals: int
    raw_win_values: list[float]
    win_corrections: list[float]
    raw_point_values: list[float]
    point_corrections: list[float]


class RatingStore:
    """The SQLite file of matches and ratings (created on first use)."""

    def __init__(self, path: str | Path | None = None) -> None:
        self.path = Path(path) if path is not None else default_store_path()
        if self.path.exists() and self.path.is_dir():
            raise ValueError(f"ratings store {self.path} is a directory, not a file")
        self.path.parent.mkdir(parents=True, exist_ok=True)
        try:
            with self._connect() as db:
                db.executescript(SCHEMA)
        except sqlite3.DatabaseError as error:
            raise ValueError(
                f"ratings store {self.path}: not a usable SQLite file ({error})"
            ) from None

    @contextmanager
    def _connect(self) -> Iterator[sqlite3.Connection]:
        db = sqlite3.connect(self.path)
        try:
            with db:  # one transaction: committed on success, rolled back on error
                yield db
        finally:
            db.close()

    def matches(self, identity: str, table: str, ladder: str) -> list[StoredMatch]:
        with self._connect() as db:
            rows = db.execute(
                "SELECT opponent, seed, deals, raw_win_values, win_corrections, raw_point_values, "
                "point_corrections FROM "
                "matches WHERE identity = ? AND table_name = ? AND ladder = ? ORDER BY id",
                (identity, table, ladder),
            ).fetchall()
        return [StoredMatch(r[0], r[1], r[2], *(json.loads(x) for x in r[3:])) for r in rows]

    def add(self, identity: str, policy: str, table: str, ladder: str, match: StoredMatch,
            rating: float, ci: float, games: int, version: str) -> None:  # fmt: skip
        """A batch of games and the rating it leads to, in one transaction."""
        now = time.time()
        with self._connect() as db:
            db.execute(
                "INSERT INTO matches (identity, policy, table_name, ladder, opponent, seed, deals, "
                "raw_win_values, win_corrections, raw_point_values, point_corrections, "
                "package_version, created) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (identity, policy, table, ladder, match.opponent, match.seed, match.deals,
                 json.dumps(match.raw_win_values), json.dumps(match.win_corrections),
                 json.dumps(match.raw_point_values), json.dumps(match.point_corrections),
                 version, now),
            )  # fmt: skip
            db.execute(
                "INSERT OR REPLACE INTO ratings VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (identity, policy, table, ladder, rating, ci, games, now),
            )

    def ratings(self, table: str) -> list[dict[str, Any]]:
        """Every rated policy of a table, best first."""
        with self._connect() as db:
            rows = db.execute(
                "SELECT policy, identity, ladder, rating, ci, games, updated FROM ratings "
                "WHERE table_name = ? ORDER BY rating DESC",
                (table,),
            ).fetchall()
        keys = ("policy", "identity", "ladder", "rating", "ci", "games", "updated")
        return [dict(zip(keys, row, strict=True)) for row in rows]
