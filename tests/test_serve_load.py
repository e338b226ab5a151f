"""The web app under load: the AI thinks off the event loop, one game's requests never interleave,
and many clients at once see no error, no corrupted game and no hidden card.

A real uvicorn server on a free loopback port, in a thread of the test's process. The figures
(reads' latency, memory, 50 clients) are ``benchmarks/serve_load.py``'s, whose clients and checks
these tests use; no test here times anything.
"""

from __future__ import annotations

import asyncio
import copy
import json
import random
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

httpx = pytest.importorskip("httpx")
import uvicorn  # noqa: E402
from starlette.testclient import TestClient  # noqa: E402

from agents.apps.serve import Players, create_app  # noqa: E402
from benchmarks.serve_load import check_record, check_state, load_wave  # noqa: E402

WAIT_S = 60.0
"""How long a test waits for the server before it calls the server stuck."""


class Held:
    """A player that thinks until the test lets it go: it says when it starts (``thinking``),
    then waits for ``go`` and plays its first legal action."""

    def __init__(self) -> None:
        self.thinking = threading.Event()
        self.go = threading.Event()

    def act(self, observation: dict[str, Any], env: Any = None) -> int:
        self.thinking.set()
        self.go.wait(WAIT_S)
        return int(np.flatnonzero(observation["action_mask"])[0])


class Server:
    """``app`` served by uvicorn in a daemon thread, on a loopback port the OS picked."""

    def __init__(self, app: Any) -> None:
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}"
        self.server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="off"))
        self.thread = threading.Thread(
            target=self.server.run, kwargs={"sockets": [self.sock]}, daemon=True
        )

    def __enter__(self) -> Server:
        self.thread.start()
        deadline = time.monotonic() + WAIT_S
        while not self.server.started:
            if not self.thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError("the test server did not start")
            time.sleep(0.02)
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=10)
        self.sock.close()


@pytest.fixture
def held_players() -> Iterator[tuple[Players, Held]]:
    """The built-in players and one more, ``held``, that thinks until the test lets it go."""
    players, held = Players(packaged=False), Held()
    make = players.make
    players.names.append("held")
    players.make = lambda name, seed, endgame: held if name == "held" else make(name, seed, endgame)
    yield players, held
    held.go.set()  # never leave a server thread waiting


def test_a_read_is_answered_while_an_ai_thinks_and_one_games_requests_never_interleave(
    held_players: tuple[Players, Held],
) -> None:
    players, held = held_players

    async def scenario(http: Any) -> None:
        idle = (await http.post("/api/games", json={"opponent": "greedy"})).json()
        # the AI plays first in this game, and thinks until let go
        body = {"opponent": "held", "seat": 1, "rules": {"max_rounds": 1}}
        creating = asyncio.create_task(http.post("/api/games", json=body))
        assert await asyncio.to_thread(held.thinking.wait, WAIT_S), "the AI never started"
        read = await http.get(f"/api/games/{idle['game_id']}")  # another game: answered now
        assert read.status_code == 200 and read.json()["move"] == idle["move"] == 0
        assert (await http.get("/api/options")).status_code == 200
        assert not creating.done()
        held.go.set()
        created = await creating
        assert created.status_code == 201, created.text
        state = created.json()
        assert state["move"] == 1 and state["your_turn"]
        game = f"/api/games/{state['game_id']}"

        # two plays of the same move at once, and a read, while the AI answers the first
        held.thinking.clear()
        held.go.clear()
        body = {"action": state["legal"][0]["action"], "move": state["move"]}
        first = asyncio.create_task(http.post(game + "/actions", json=body))
        assert await asyncio.to_thread(held.thinking.wait, WAIT_S), "the AI never answered"
        second = asyncio.create_task(http.post(game + "/actions", json=body))
        reading = asyncio.create_task(http.get(game))
        assert (await http.get(f"/api/games/{idle['game_id']}")).status_code == 200
        assert not (first.done() or second.done() or reading.done())  # they wait for the game
        held.go.set()
        played, again, seen = await asyncio.gather(first, second, reading)
        assert played.status_code == 200, played.text
        assert again.status_code == 409 and "stale" in again.json()["error"]
        assert seen.json()["move"] == played.json()["move"] == 3  # the whole turn, never half

        # the game goes on to its end, and plays again the same from its record
        states, rng = [played.json()], random.Random(0)
        while not states[-1]["done"]:
            move = {"action": rng.choice(states[-1]["legal"])["action"],
                    "move": states[-1]["move"]}  # fmt: skip
            response = await http.post(game + "/actions", json=move)
            assert response.status_code == 200, response.text
            states.append(response.json())
        record = (await http.get(game + "/record")).json()
        assert check_record(record) == []
        assert [p for s in states for p in check_state(s, record, seat=1)] == []

    async def run(base: str) -> None:
        async with httpx.AsyncClient(base_url=base, timeout=WAIT_S) as http:
            await scenario(http)

    with Server(create_app(players)) as server:
        asyncio.run(run(server.url))


def test_the_load_checks_catch_a_hidden_card_and_a_corrupted_game() -> None:
    client = TestClient(create_app(Players(packaged=False)))
    state = client.post("/api/games", json={"opponent": "greedy", "seed": 5, "seat": 1,
                                             "rules": {"max_rounds": 1}}).json()  # fmt: skip
    states = [state]
    while not state["done"]:
        move = {"action": state["legal"][-1]["action"], "move": state["move"]}
        state = client.post(f"/api/games/{state['game_id']}/actions", json=move).json()
        states.append(state)
    record = client.get(f"/api/games/{state['game_id']}/record").json()
    assert check_record(record) == []
    assert [p for s in states for p in check_state(s, record, seat=1)] == []

    start = states[0]  # the AI's hand at the first state the human saw
    hidden = record["steps"][start["move"]]["before"]["hands"][0][0]
    assert "hidden cards" in " ".join(check_state(dict(start, note=hidden), record, seat=1))
    swapped = dict(start, hand=[hidden, *start["hand"][1:]])
    assert check_state(swapped, record, seat=1)
    bad = copy.deepcopy(record)
    bad["steps"][5]["takes"] = [*bad["steps"][5]["takes"], "AS"]
    assert check_record(bad)
    bad = copy.deepcopy(record)
    bad["final"]["scores"][0] += 1
    assert check_record(bad)


@pytest.mark.slow
def test_clients_at_once_against_the_searching_player_see_no_error_corruption_or_leak() -> None:
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        with Server(create_app(Players())) as server:
            wave = asyncio.run(load_wave(server.url, clients=8, opponent="bastra_2p:infer",
                                         seed=7, probes=2, timeout=600))  # fmt: skip
    finally:
        torch.set_num_threads(threads)
    assert wave.errors == []
    assert wave.problems == []
    assert len(wave.games) == 8 and wave.plays == 8 * 24
    assert all(record["final"]["done"] for _, _, record in wave.games)


def test_the_web_page_quotes_the_load_figures_it_was_measured_with() -> None:
    root = Path(__file__).resolve().parents[1]
    figures = json.loads((root / "docs" / "serve_load.json").read_text(encoding="utf-8"))
    page = (root / "docs" / "web.md").read_text(encoding="utf-8")
    for run in ("before", "after"):
        for key in ("read_p50_ms", "read_p95_ms", "read_max_ms"):
            assert f"{figures[run][key]} ms" in page, (run, key)
        assert " MiB" in page and ", ".join(map(str, figures[run]["rss_mib"])) in page, run
        assert figures[run]["errors"] == figures[run]["corrupted_or_leaked"] == 0
