"""A card table in the browser: play against the agents, watch replays, read a leaderboard.

    python -m agents.serve                      # http://127.0.0.1:8000/
    python -m agents.serve --port 8080 --model mine=runs/x/final.pt \\
        --replays runs/records --leaderboard runs/round_robin.json

The page (plain HTML, CSS and JavaScript modules in ``agents/apps/web``, no build step, nothing
fetched from elsewhere) talks to the JSON API below, which is also there for scripts:

- ``GET  /api/options``: tables, opponents, the variant rules (names, types, defaults), and the
  players' ratings from the packaged 2p round-robin (``agents/pretrained/ratings_2p.json``).
- ``POST /api/games`` ``{"table": "2p" | "4p_teams", "opponent": name, "partner": name,
  "seat": int, "rules": {field: value}, "endgame": bool, "seed": int}`` (all optional) -> 201 and
  the state, with ``game_id``.
- ``GET  /api/games/{id}``: the state as the human's seat sees it.
- ``POST /api/games/{id}/actions`` ``{"action": int, "move": int}``: play (``move``, optional, is
  the state's ``move`` counter the action was chosen at: an older one is refused as stale); the
  reply is the state after the AI's answers, up to the human's next turn or the game's end.
- ``GET  /api/games/{id}/hint``: on the human's turn, the coach's view of each legal move: the
  strongest shipped player's probability and, where it searches, its value, from the human's own
  observation only (409 on another seat's turn; 404 where the table has no shipped model).
- ``GET  /api/games/{id}/record``: the finished game's record (``agents.evaluation.replay``).
- ``GET  /api/replays``, ``GET /api/replays/{name}``: the records in ``--replays DIR``.
- ``GET  /api/leaderboard``: the round-robins of ``--leaderboard FILE`` (``agents.evaluate``) and
  the policies rated on the frozen ladders in ``--ratings-store`` (``bastra rate``).

Errors are 4xx with ``{"error": "..."}`` and leave the game as it was. A state holds only what the
human's seat may know: its own hand, the board, the public counts and plays; other hands, the deck
and the game seed stay on the server until the game is over. Games are held in memory, at most
``--max-games`` at once, each dropped after ``--game-ttl`` seconds untouched. Checkpoints are only
ever those named at start-up: no request names a file.

The AI seats think on a few threads (``off_loop``), never on the event loop, so that while they
do the server goes on answering other requests (another game's state at once); each game has
its lock, taken by every request that reads or changes it, so two requests on one game never
interleave and a read sees the game between turns, never within one.
"""

from __future__ import annotations

import argparse
import json
import mimetypes
import os
import re
import secrets
import sys
import time
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import asdict, replace
from pathlib import Path
from typing import Any, TypeVar

from anyio import CapacityLimiter, Lock, to_thread
from anyio.lowlevel import RunVar
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from agents.evaluation.ladder import load_ladder
from agents.evaluation.replay import Move, build_record, by_card, explain, read_record, step_play
from agents.evaluation.store import RatingStore, default_store_path
from agents.learning.policy import PRETRAINED, PRETRAINED_DIR, LearnedPolicy
from agents.registry import BASELINES, load_policy, make_policy
from bastra_env import Rules, card_name, raw_env
from bastra_env.cards import iter_cards
from bastra_env.layout import OFFSETS
from bastra_env.rules import FIELD_NAMES, TABLES

WEB_DIR = Path(__file__).resolve().parent / "web"
DEFAULT_OPPONENT = {"2p": "bastra_2p", "4p_teams": "bastra_4p_teams"}
MAX_BODY = 8192
"""Bytes a request body may hold."""
RULE_LIMITS = {"target_score": (1, 1000), "max_rounds": (1, 100)}
"""Bounds the app puts on a game's length (``Rules`` itself takes any positive value)."""
FORM_FIELDS = tuple(f for f in FIELD_NAMES if f not in ("num_players", "teams"))
"""The variant rules a new game may set; the table fixes the players and teams."""
CREATE_KEYS = ("table", "opponent", "partner", "seat", "rules", "endgame", "seed")
RECORD_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,200}\.json$")
MAX_REPLAYS = 1000
SEARCH_OFFERED = ("pimc:64", "ismcts:400")
"""Search players the app offers besides the baselines and the models."""
STRONGEST = {"2p": "bastra_2p:infer", "4p_teams": "bastra_4p_teams:infer"}
"""The strongest shipped player of each table: offered as an opponent and partner, and the
coach behind the hints."""
RATINGS = PRETRAINED_DIR / "ratings_2p.json"
"""The 2p round-robin of the shipped and built-in players (``agents.evaluate --json``)."""
AI_THREADS = max(1, min(4, (os.cpu_count() or 1) - 1))
"""Threads the AI seats think on at once (``off_loop``); more requests wait their turn. One core
is left to the event loop: the search kernels hold the interpreter lock while they run, so each
thread more makes a read wait longer for it (on 2 cores, ``benchmarks/serve_load.py``'s reads
were several times slower with two threads than with one), and threads beyond the cores add
nothing."""
_THINKERS: RunVar[CapacityLimiter] = RunVar("bastra_thinkers")
T = TypeVar("T")

mimetypes.add_type("text/javascript", ".js")  # module scripts need it, whatever the OS's table says


async def off_loop(work: Callable[..., T], *args: Any) -> T:
    """``work(*args)`` on one of ``AI_THREADS`` threads of this event loop, which meanwhile
    answers other requests. Cancelling the request waits for ``work`` to finish, so a game's
    lock is never let go while a thread still plays on it."""
    try:
        limiter = _THINKERS.get()
    except LookupError:
        limiter = CapacityLimiter(AI_THREADS)
        _THINKERS.set(limiter)
    return await to_thread.run_sync(work, *args, limiter=limiter)


def packaged_ratings() -> dict[str, dict[str, float]]:
    """``{player: {"rating", "low", "high"}}`` of the packaged 2p round-robin (empty if absent)."""
    try:
        board = json.loads(RATINGS.read_text())
    except (OSError, ValueError):
        return {}
    spans = board.get("rating_intervals", {})
    return {
        name: {"rating": round(r), "low": round(spans.get(name, (r, r))[0]),
               "high": round(spans.get(name, (r, r))[1])}
        for name, r in board.get("ratings", {}).items()
    }  # fmt: skip


class ClientError(Exception):
    """A request the app refuses: its HTTP status and a message saying what is wrong."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


def names(mask: int) -> list[str]:
    return [card_name(c) for c in iter_cards(mask)]


# ------------------------------------------------------------------------------------ players
class Players:
    """The players a game may be given: built-in baselines, the packaged models and the
    checkpoints named at start-up (``{name: path}``), each loaded once."""

    def __init__(self, models: dict[str, str] | None = None, packaged: bool = True) -> None:
        self.learned: dict[str, tuple[LearnedPolicy, LearnedPolicy]] = {}
        sources = dict.fromkeys(PRETRAINED if packaged else ()) | dict(models or {})
        for name, path in sources.items():
            if name in BASELINES:
                raise ValueError(f"model name {name!r} is a built-in player's name")
            searching = load_policy(path or name)
            if not isinstance(searching, LearnedPolicy):
                raise ValueError(f"model {name!r}: the app plays train.py checkpoints, not RLlib's")
            network = replace(searching.search, endgame=False)
            alone = LearnedPolicy(searching.model, network, name=name)
            searching.name = name
            self.learned[name] = (searching, alone)
        for table, name in STRONGEST.items():  # the strongest presets of the shipped models
            model = DEFAULT_OPPONENT[table]
            if model in self.learned and packaged:
                strongest = make_policy(name)
                assert isinstance(strongest, LearnedPolicy)
                self.learned[name] = (strongest, self.learned[model][1])
        self.names = [*self.learned, *BASELINES, *SEARCH_OFFERED]

    def coach(self, table: str) -> tuple[str, LearnedPolicy] | None:
        """The player behind the hints at ``table``: its strongest shipped player."""
        name = STRONGEST.get(table)
        if name is None or name not in self.learned:
            return None
        return name, self.learned[name][0]

    def make(self, name: str, seed: int, endgame: bool) -> Any:
        if name in self.learned:
            return self.learned[name][0 if endgame else 1]
        return make_policy(name, seed=seed)

    def check(self, name: Any, key: str) -> str:
        if not isinstance(name, str) or name not in self.names:
            raise ClientError(400, f"unknown {key} {name!r}: choose one of {self.names}")
        return name


# ------------------------------------------------------------------------------------ one game
class Table:
    """One live game: the engine, the human's seat and the players of the other seats."""

    def __init__(
        self,
        game_id: str,
        table: str,
        rules: Rules,
        seat: int,
        seat_names: list[str],
        policies: list[Any],
        seed: int,
    ) -> None:
        self.game_id = game_id
        self.table = table
        self.rules = rules
        self.seat = seat
        self.seat_names = seat_names
        self.policies = policies
        self.seed = seed
        self.env = raw_env(rules=rules)
        self.env.reset(seed=seed)
        self.moves: list[Move] = []
        self.plays: list[dict[str, Any]] = []
        self.touched = time.monotonic()
        self.ai_ms = 0.0
        self.recent_from = 0
        """Plays from this index on were made by the latest request (the human's and the AI's)."""
        self._record: dict[str, Any] | None = None
        self.coach: tuple[str, LearnedPolicy] | None = None
        """The player behind the hints (``Players.coach``), if the table has one."""
        self.lock = Lock()
        """Held by each request on this game, from reading it to its answer (``create_app``)."""

    @property
    def game(self) -> Any:
        return self.env.game

    @property
    def to_move(self) -> int | None:
        return None if self.game.done else self.game.current

    def _play(self, action: int, explanation: dict[str, Any] | None) -> None:
        self.moves.append((self.game.current, action, explanation))
        self.plays.append({"move": len(self.moves) - 1, **step_play(self.env, action)})

    def advance(self) -> None:
        """The AI seats play until it is the human's turn or the game is over."""
        start = time.perf_counter()
        while self.to_move is not None and self.to_move != self.seat:
            agent = self.env.agent_selection
            observation = self.env.observe(agent)
            policy = self.policies[self.game.current]
            action = int(policy.act(observation, env=self.env))
            details = explain(policy, observation["observation"], observation["action_mask"])
            self._play(action, details)
        self.ai_ms = 1000 * (time.perf_counter() - start)

    def human_play(self, body: dict[str, Any]) -> None:
        if set(body) - {"action", "move"}:
            extra = sorted(set(body) - {"action", "move"})
            raise ClientError(
                400, f'unknown key(s) {extra}; an action is {{"action": int, "move": int}}'
            )
        action = body.get("action")
        if type(action) is not int:
            raise ClientError(400, f'"action" must be an integer, got {json.dumps(action)}')
        move = body.get("move")
        if move is not None and type(move) is not int:
            raise ClientError(400, f'"move" must be an integer, got {json.dumps(move)}')
        if self.game.done:
            raise ClientError(409, "the game is over: start a new one")
        if move is not None and move != len(self.moves):
            raise ClientError(
                409, f"stale action: it was chosen at move {move}, the game is at move "
                     f"{len(self.moves)}; read the state again"
            )  # fmt: skip
        if self.to_move != self.seat:
            raise ClientError(409, "it is not your turn")
        legal = self.env.legal_actions()
        if action not in legal:
            raise ClientError(422, f"action {action} is not legal now; legal actions: {legal}")
        self.recent_from = len(self.plays)
        self._play(action, None)
        self.advance()

    def play(self, body: dict[str, Any]) -> dict[str, Any]:
        """``human_play``, then the state the human sees after the AI's answers."""
        self.human_play(body)
        return self.state()

    def hint(self) -> dict[str, Any]:
        """The coach's view of the human's legal moves, from the human's observation alone:
        ``{"player", "value", "moves": [{"action", "prob", "search"}]}`` (``search`` None where
        the coach plays its network alone)."""
        coach = self.coach
        if coach is None:
            raise ClientError(404, f"no coach for the {self.table} table: it has no shipped model")
        if self.to_move != self.seat:
            raise ClientError(409, "hints are for your turn: it is not your turn")
        name, policy = coach
        observation = self.env.observe(self.env.agent_selection)
        probs, values = policy.explain_batch(
            observation["observation"][None], observation["action_mask"][None]
        )
        searched = policy.move_values(observation) or {}
        moves = [
            {"action": a, "prob": round(float(probs[0, a]), 4),
             "search": round(searched[a], 4) if a in searched else None}
            for a in self.env.legal_actions()
        ]  # fmt: skip
        return {"player": name, "value": round(float(values[0]), 4), "moves": moves}

    def legal(self) -> list[dict[str, Any]]:
        if self.to_move != self.seat:
            return []
        agent = self.env.agent_selection
        bastra = self.env.observe(agent)["observation"][OFFSETS["action_bastra"]]
        options = []
        for action in self.env.legal_actions():
            card, takes = self.env.decode_action(action)
            options.append(
                {
                    "action": action,
                    "card": card,
                    "takes": by_card(takes),
                    "bastra": bool(bastra[action]),
                }
            )
        return options

    def state(self) -> dict[str, Any]:
        """What the human's seat may know, and nothing else."""
        game, rules = self.game, self.rules
        n = rules.num_players
        hands = game.hands
        round_number = game.round
        winner = game.winner
        results = [asdict(result) for result in game.results]
        # the plays of the round on the table; once the game is over, of its last round
        shown_round = self.plays[-1]["round"] if game.done and self.plays else round_number
        return {
            "game_id": self.game_id,
            "table": self.table,
            "rules": rules.to_dict(),
            "seat": self.seat,
            "side": rules.side_of(self.seat),
            "players": [
                {
                    "seat": s,
                    "name": "you" if s == self.seat else self.seat_names[s],
                    "side": rules.side_of(s),
                    "you": s == self.seat,
                }
                for s in range(n)
            ],
            "move": len(self.moves),
            "round": round_number,
            "dealer": game.dealer,
            "current": self.to_move,
            "your_turn": self.to_move == self.seat,
            "hand": names(hands[self.seat]),
            "hand_sizes": [int(hands[s]).bit_count() for s in range(n)],
            "board": names(game.board),
            "deck_left": len(game.deck) - game.deck_pos,
            "captured": [int(game.captured[s]).bit_count() for s in range(n)],
            "bastras": [game.bastras[s] for s in range(n)],
            "jack_bastras": [game.jack_bastras[s] for s in range(n)],
            "scores": list(game.scores),
            "legal": self.legal(),
            "last_play": self.plays[-1] if self.plays else None,
            "history": [p for p in self.plays if p["round"] == shown_round],
            "recent": self.plays[self.recent_from :],
            "round_results": results,
            "done": game.done,
            "winner": winner,
            "draw": game.done and winner is None,
            "ai_ms": round(self.ai_ms, 2),
            "coach": self.coach[0] if self.coach else None,
        }

    def record(self) -> dict[str, Any]:
        if not self.game.done:
            raise ClientError(409, "the game is not over: its record holds every hand")
        if self._record is None:
            self._record = build_record(
                self.rules, self.seed, self.moves, self.seat_names, table=self.table,
                source="agents.serve",
            )  # fmt: skip
        return self._record


# ------------------------------------------------------------------------------------ games
class GameStore:
    """The live games, at most ``max_games``; a game untouched for ``ttl`` seconds is dropped,
    and when the store is full the least recently used game makes room."""

    def __init__(
        self, max_games: int = 500, ttl: float = 3600.0, clock: Callable[[], float] = time.monotonic
    ) -> None:
        if max_games < 1 or ttl <= 0:
            raise ValueError("max_games must be at least 1 and ttl positive")
        self.max_games = max_games
        self.ttl = ttl
        self.clock = clock
        self.games: OrderedDict[str, Table] = OrderedDict()

    def __len__(self) -> int:
        return len(self.games)

    def purge(self) -> None:
        now = self.clock()
        while self.games:
            oldest = next(iter(self.games.values()))
            if now - oldest.touched < self.ttl:
                break
            self.games.popitem(last=False)

    def add(self, table: Table) -> None:
        self.purge()
        while len(self.games) >= self.max_games:
            self.games.popitem(last=False)
        table.touched = self.clock()
        self.games[table.game_id] = table

    def get(self, game_id: str) -> Table:
        self.purge()
        table = self.games.get(game_id)
        if table is None:
            raise ClientError(404, f"no game {game_id!r}: it never existed, or it expired")
        table.touched = self.clock()
        self.games.move_to_end(game_id)
        return table


# ------------------------------------------------------------------------------------ the app
def new_table(players: Players, body: dict[str, Any]) -> Table:
    table = body.get("table", "2p")
    if table not in TABLES:
        raise ClientError(400, f"unknown table {table!r}: choose one of {list(TABLES)}")
    opponent = players.check(body.get("opponent", DEFAULT_OPPONENT[table]), "opponent")
    fields = body.get("rules", {})
    if not isinstance(fields, dict):
        raise ClientError(400, '"rules" must be an object of rule fields')
    unknown = sorted(set(fields) - set(FORM_FIELDS))
    if unknown:
        raise ClientError(
            400, f"unknown rule field(s) {unknown}; the form takes {list(FORM_FIELDS)}"
        )
    for name, (low, high) in RULE_LIMITS.items():
        value = fields.get(name)
        if type(value) is int and not low <= value <= high:
            raise ClientError(
                400, f"rules.{name} must be between {low} and {high} here, got {value}"
            )
    try:
        rules = Rules(**TABLES[table], **fields)
    except (TypeError, ValueError) as error:
        raise ClientError(400, str(error)) from None
    seat = body.get("seat", 0)
    if type(seat) is not int or not 0 <= seat < rules.num_players:
        raise ClientError(400, f'"seat" must be an integer from 0 to {rules.num_players - 1}')
    endgame = body.get("endgame", True)
    if type(endgame) is not bool:
        raise ClientError(400, '"endgame" must be true or false')
    seed = body.get("seed")
    if seed is None:
        seed = secrets.randbits(63)
    elif type(seed) is not int or not 0 <= seed < 2**63:
        raise ClientError(400, '"seed" must be an integer from 0 to 2**63 - 1')
    seat_names: list[str] = []
    policies: list[Any] = []
    partner = opponent  # read only in the team game
    if rules.teams:
        partner = players.check(body.get("partner", opponent), "partner")
    for s in range(rules.num_players):
        if s == seat:
            seat_names.append("human")
            policies.append(None)
            continue
        name = partner if rules.teams and rules.side_of(s) == rules.side_of(seat) else opponent
        seat_names.append(name)
        policies.append(players.make(name, seed=seed + s, endgame=endgame))
    game = Table(secrets.token_urlsafe(18), table, rules, seat, seat_names, policies, seed)
    game.coach = players.coach(table)
    game.advance()
    return game


async def read_json(request: Request) -> dict[str, Any]:
    length = request.headers.get("content-length")
    if length is not None and (not length.isdigit() or int(length) > MAX_BODY):
        raise ClientError(413, f"the body may hold at most {MAX_BODY} bytes")
    body = b""
    async for chunk in request.stream():
        body += chunk
        if len(body) > MAX_BODY:
            raise ClientError(413, f"the body may hold at most {MAX_BODY} bytes")
    if not body.strip():
        return {}
    try:
        value = json.loads(body)
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise ClientError(400, f"the body is not valid JSON ({error})") from None
    if not isinstance(value, dict):
        raise ClientError(400, "the body must be a JSON object")
    return value


def load_leaderboards(paths: Sequence[str | Path]) -> list[dict[str, Any]]:
    boards = []
    for path in map(Path, paths):
        try:
            data = json.loads(path.read_text())
        except (OSError, json.JSONDecodeError) as error:
            raise ValueError(f"leaderboard {path} is not readable JSON ({error})") from None
        if not isinstance(data, dict) or "results" not in data or "ratings" not in data:
            raise ValueError(
                f"leaderboard {path} is not an agents.evaluate --json file (no results/ratings)"
            )
        boards.append({"name": path.stem, **data})
    return boards


def shown_name(policy: str) -> str:
    """A rated policy as the leaderboard shows it: a checkpoint by its file name only (the
    server's folders are not sent to clients)."""
    head, sep, tail = policy.partition(":")
    return Path(head).name + sep + tail if ("/" in head or "\\" in head) else policy


def rated_boards(store: RatingStore) -> list[dict[str, Any]]:
    """One board per table with rated entries in the store (``bastra rate``): the frozen ladder's
    members beside every policy rated on it, each with its 95% interval."""
    boards = []
    for table in TABLES:
        entries = store.ratings(table)
        if not entries:
            continue
        try:
            ladder = load_ladder(table)
        except ValueError:
            continue
        rows: list[dict[str, Any]] = [
            {"player": name, "rating": rating, "low": None, "high": None, "games": None,
             "member": True} for name, rating in ladder.ratings.items()
        ]  # fmt: skip
        for e in entries:
            if e["ladder"] != ladder.version:
                continue
            name = shown_name(e["policy"])
            digest = e["identity"].rpartition("@")[2] if "@" in e["identity"] else ""
            rows.append({"player": name + (f" @{digest[:8]}" if digest else ""),
                         "rating": e["rating"], "low": e["rating"] - e["ci"],
                         "high": e["rating"] + e["ci"], "games": e["games"],
                         "member": False})  # fmt: skip
        rows.sort(key=lambda r: -r["rating"])
        boards.append({"name": f"rated on the {table} ladder", "kind": "rated", "table": table,
                       "ladder": ladder.version, "rows": rows})  # fmt: skip
    return boards


def create_app(
    players: Players | None = None,
    max_games: int = 500,
    ttl: float = 3600.0,
    replays: str | Path | None = None,
    leaderboards: Sequence[str | Path] = (),
    clock: Callable[[], float] = time.monotonic,
    ratings_store: str | Path | None = None,
) -> Starlette:
    """The ASGI app. ``replays``: a folder of records to offer; ``leaderboards``: round-robin
    files of ``agents.evaluate --json``; ``ratings_store``: the SQLite store of ``bastra rate``,
    whose rated entries the leaderboard shows (read at each request). All are read on the
    server only."""
    players = players if players is not None else Players()
    store = GameStore(max_games=max_games, ttl=ttl, clock=clock)
    replay_dir = Path(replays).resolve() if replays is not None else None
    if replay_dir is not None and not replay_dir.is_dir():
        raise ValueError(f"--replays {replays}: no such folder")
    boards = load_leaderboards(leaderboards)
    rated = RatingStore(ratings_store) if ratings_store is not None else None
    ratings = packaged_ratings()

    def replay_files() -> dict[str, Path]:
        if replay_dir is None:
            return {}
        files = sorted(p for p in replay_dir.glob("*.json") if RECORD_NAME.match(p.name))
        return {p.name: p for p in files[:MAX_REPLAYS]}

    async def index(request: Request) -> FileResponse:
        return FileResponse(WEB_DIR / "index.html")

    async def options(request: Request) -> JSONResponse:
        defaults = Rules()
        rules = []
        for name in FORM_FIELDS:
            default = getattr(defaults, name)
            kind = {"tie_break": "choice", "capture": "choice"}.get(name)
            kind = kind or ("bool" if isinstance(default, bool) else "int")
            field: dict[str, Any] = {"name": name, "type": kind, "default": default}
            if name == "tie_break":
                field["choices"] = ["extra_rounds", "draw"]
            if name == "capture":
                field["choices"] = ["choose", "auto"]
            if name in RULE_LIMITS:
                field["min"], field["max"] = RULE_LIMITS[name]
            if name == "max_rounds":
                field["nullable"] = True
            rules.append(field)
        return JSONResponse(
            {
                "tables": list(TABLES),
                "opponents": players.names,
                "default_opponent": DEFAULT_OPPONENT,
                "strongest": STRONGEST,
                "ratings": ratings,
                "rules": rules,
                "replays": replay_dir is not None,
                "leaderboard": bool(boards) or rated is not None,
            }
        )

    async def create(request: Request) -> JSONResponse:
        body = await read_json(request)
        game = await off_loop(new_table, players, body)  # the AI seats before the human's
        store.add(game)
        state = game.state()
        ignored = sorted(set(body) - set(CREATE_KEYS))
        if ignored:
            state["ignored_keys"] = ignored
        return JSONResponse(state, status_code=201)

    async def read(request: Request) -> JSONResponse:
        game = store.get(request.path_params["game_id"])
        async with game.lock:  # a state between turns: wait while this game's AI thinks
            return JSONResponse(game.state())

    async def act(request: Request) -> JSONResponse:
        game = store.get(request.path_params["game_id"])
        body = await read_json(request)
        async with game.lock:
            return JSONResponse(await off_loop(game.play, body))

    async def hint(request: Request) -> JSONResponse:
        game = store.get(request.path_params["game_id"])
        async with game.lock:
            return JSONResponse(await off_loop(game.hint))

    async def record(request: Request) -> JSONResponse:
        game = store.get(request.path_params["game_id"])
        async with game.lock:  # the record plays the game again
            return JSONResponse(await off_loop(game.record))

    def read_replay(name: str) -> dict[str, Any]:
        path = replay_files().get(name)
        if path is None:
            raise ClientError(404, f"no replay named {name!r}")
        try:
            return read_record(path)
        except ValueError as error:
            raise ClientError(422, str(error)) from None

    async def replay_list(request: Request) -> JSONResponse:
        if replay_dir is None:
            raise ClientError(404, "no replays: start the server with --replays DIR")
        return JSONResponse({"replays": list(await to_thread.run_sync(replay_files))})

    async def replay(request: Request) -> JSONResponse:
        return JSONResponse(await to_thread.run_sync(read_replay, request.path_params["name"]))

    async def leaderboard(request: Request) -> JSONResponse:
        if not boards and rated is None:
            raise ClientError(404, "no leaderboard: start the server with --leaderboard FILE")
        stored = await to_thread.run_sync(rated_boards, rated) if rated else []
        return JSONResponse({"leaderboards": boards + stored})

    async def client_error(request: Request, error: Exception) -> JSONResponse:
        assert isinstance(error, ClientError)
        return JSONResponse({"error": error.message}, status_code=error.status)

    async def http_error(request: Request, error: Exception) -> JSONResponse:
        assert isinstance(error, HTTPException)
        return JSONResponse({"error": error.detail}, status_code=error.status_code)

    app = Starlette(
        routes=[
            Route("/", index),
            Route("/api/options", options),
            Route("/api/games", create, methods=["POST"]),
            Route("/api/games/{game_id}", read),
            Route("/api/games/{game_id}/actions", act, methods=["POST"]),
            Route("/api/games/{game_id}/hint", hint),
            Route("/api/games/{game_id}/record", record),
            Route("/api/replays", replay_list),
            Route("/api/replays/{name}", replay),
            Route("/api/leaderboard", leaderboard),
            Mount("/static", StaticFiles(directory=WEB_DIR), name="static"),
        ],
        exception_handlers={ClientError: client_error, HTTPException: http_error},
    )
    app.state.store = store
    app.state.players = players
    return app


def parse_models(specs: Sequence[str]) -> dict[str, str]:
    models = {}
    for spec in specs:
        name, sep, path = spec.partition("=")
        if not sep or not name or not path:
            raise ValueError(f"--model takes NAME=CHECKPOINT, got {spec!r}")
        if not re.fullmatch(r"[A-Za-z0-9_.-]{1,64}", name):
            raise ValueError(f"--model name {name!r}: letters, digits, _ . - only")
        models[name] = path
    return models


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m agents.serve",
        description="Serve the Bastra card table: play the agents, watch replays, read a "
        "leaderboard in the browser.",
        epilog="example: python -m agents.serve --port 8000 --model mine=runs/x/final.pt",
    )
    parser.add_argument("--host", default="127.0.0.1", help="address to bind (default: loopback)")
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument(
        "--model", action="append", default=[], metavar="NAME=CHECKPOINT",
        help="offer this checkpoint as a player called NAME (repeatable)",
    )  # fmt: skip
    parser.add_argument(
        "--no-packaged", action="store_true", help="don't offer the packaged models"
    )
    parser.add_argument("--replays", metavar="DIR", help="offer the game records in DIR")
    parser.add_argument(
        "--leaderboard", action="append", default=[], metavar="FILE",
        help="a round-robin written by python -m agents.evaluate A B C --json FILE (repeatable)",
    )  # fmt: skip
    parser.add_argument(
        "--ratings-store", metavar="PATH",
        help="the bastra rate store whose rated entries the leaderboard shows (default: "
        f"{default_store_path()} when it exists)",
    )  # fmt: skip
    parser.add_argument("--max-games", type=int, default=500, help="live games held at once")
    parser.add_argument(
        "--game-ttl", type=float, default=3600.0, help="seconds a game is kept idle"
    )
    args = parser.parse_args(argv)
    try:
        if not 0 < args.port < 65536:
            raise ValueError(f"--port must be from 1 to 65535, got {args.port}")
        players = Players(parse_models(args.model), packaged=not args.no_packaged)
        store = args.ratings_store
        if store is None and default_store_path().is_file():
            store = default_store_path()
        app = create_app(players, args.max_games, args.game_ttl, args.replays, args.leaderboard,
                         ratings_store=store)  # fmt: skip
    except ValueError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    import torch
    import uvicorn

    torch.set_num_threads(1)  # one game's forward pass is small: threads only add latency
    print(f"Bastra table at http://{args.host}:{args.port}/ (Ctrl-C to stop)", flush=True)
    uvicorn.run(app, host=args.host, port=args.port, log_level="warning")
    return 0


if __name__ == "__main__":
    sys.exit(main())
