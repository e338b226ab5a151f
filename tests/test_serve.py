"""The web app's JSON API: what a seat may see, bad requests, the game store, many clients."""

import asyncio
import json
import random
import re
import threading
import time

import pytest

pytest.importorskip("starlette", reason="the web app needs starlette (a core dependency)")
from starlette.testclient import TestClient

from agents.apps.serve import WEB_DIR, Players, create_app, main, parse_models
from agents.evaluation.replay import build_record, write_record
from bastra_env import card_name, parse_card
from bastra_env.cards import iter_cards

SHORT = {"max_rounds": 1}


@pytest.fixture(scope="module")
def players():
    return Players()


@pytest.fixture
def client(players):
    return TestClient(create_app(players))


def new_game(client, **body):
    response = client.post("/api/games", json=body)
    assert response.status_code == 201, response.text
    return response.json()


def play(client, state, action=None):
    if action is None:
        action = state["legal"][0]["action"]
    response = client.post(
        f"/api/games/{state['game_id']}/actions", json={"action": action, "move": state["move"]}
    )
    assert response.status_code == 200, response.text
    return response.json()


def test_a_game_is_played_to_its_end_through_the_api(client):
    state = new_game(client, table="2p", opponent="bastra_2p", seed=4, rules={"target_score": 30})
    assert set(state) >= {"game_id", "seat", "hand", "board", "legal", "scores", "done"}
    assert state["seat"] == 0 and state["your_turn"] and not state["done"]
    rng = random.Random(0)
    while not state["done"]:
        options = state["legal"]
        assert options and all(o["card"] in state["hand"] for o in options)
        assert all(set(o["takes"]) <= set(state["board"]) for o in options)
        state = play(client, state, rng.choice(options)["action"])
        assert state["legal"] == [] or state["your_turn"]
    assert state["winner"] in (0, 1) and max(state["scores"]) >= 30
    assert state["round_results"][-1]["scores"] == state["scores"]
    record = client.get(f"/api/games/{state['game_id']}/record").json()
    assert record["final"]["scores"] == state["scores"]
    assert len(record["steps"]) == state["move"] == 48 * len(state["round_results"])
    assert [p["name"] for p in record["players"]] == ["human", "bastra_2p"]


def test_a_team_game_seats_the_partner_opposite_and_the_ai_answers(client):
    state = new_game(client, table="4p_teams", opponent="greedy", partner="heuristic", seed=2,
                     rules=SHORT)  # fmt: skip
    names = [p["name"] for p in state["players"]]
    assert names == ["you", "greedy", "heuristic", "greedy"]
    assert [p["side"] for p in state["players"]] == [0, 1, 0, 1]
    while not state["done"]:
        before = state["move"]
        state = play(client, state)
        assert state["move"] > before
    assert state["move"] == 48 and len(state["scores"]) == 2


def seen_cards(state):
    """Every card name a state holds, wherever it is."""
    return set(re.findall(r'"((?:10|[2-9AJQK])[CDHS])"', json.dumps(state)))


def hidden_swap(game, seats):
    """Swap a card of another seat's hand with one still in the deck, on the server."""
    g = game.env.game
    deck_cards = list(g.deck[g.deck_pos :])
    for seat in seats:
        hand = list(iter_cards(g.hands[seat]))
        if hand and deck_cards:
            a, b = hand[0], deck_cards[0]
            g.hands[seat] = g.hands[seat] ^ (1 << a) ^ (1 << b)
            position = g.deck_pos + list(g.deck[g.deck_pos :]).index(b)
            g.state[g.state.size - 56 + position] = a  # DECK block: the row's last 56 entries
            deck_cards = deck_cards[1:]
            return a, b
    raise AssertionError("nothing to swap")


@pytest.mark.parametrize("table", ["2p", "4p_teams"])
def test_a_seat_sees_nothing_hidden_swapping_hidden_cards_changes_no_response(players, table):
    from bastra_env import compiled_rules as K

    app = create_app(players)
    client = TestClient(app)
    state = new_game(client, table=table, opponent="greedy", seed=918273645546372819)
    for _ in range(3):
        state = play(client, state)
    game = app.state.store.games[state["game_id"]]
    assert game.env.game.state.size - 56 == K.DECK  # the swap helper's idea of the row
    before = client.get(f"/api/games/{state['game_id']}").json()
    hint = client.get(f"/api/games/{state['game_id']}/hint").json()
    others = [s for s in range(game.rules.num_players) if s != game.seat]
    snapshot = game.env.snapshot()
    hidden = {c for a, cards in snapshot["hands"].items() if a != f"player_{game.seat}"
              for c in cards} | set(snapshot["deck"])  # fmt: skip
    assert not (seen_cards(before) & hidden)  # no hidden card appears anywhere in the state
    assert str(game.seed) not in json.dumps(before)
    a, b = hidden_swap(game, others)
    assert card_name(a) in hidden and card_name(b) in hidden
    after = client.get(f"/api/games/{state['game_id']}").json()
    assert after == before
    assert client.get(f"/api/games/{state['game_id']}/hint").json() == hint  # the coach too
    record = client.get(f"/api/games/{state['game_id']}/record")
    assert record.status_code == 409 and "not over" in record.json()["error"]


def test_bad_requests_get_a_4xx_with_a_message_and_leave_the_game_as_it_was(client):
    state = new_game(client, opponent="greedy", seed=5)
    url = f"/api/games/{state['game_id']}/actions"
    legal = {o["action"] for o in state["legal"]}
    illegal = next(a for a in range(208) if a not in legal)
    bad = [
        (b"{", 400, "not valid JSON"),
        (b"[1]", 400, "JSON object"),
        (b'"x"', 400, "JSON object"),
        (b"\xff\xfe", 400, "not valid JSON"),
        (json.dumps({"action": "3"}).encode(), 400, "must be an integer"),
        (json.dumps({"action": True}).encode(), 400, "must be an integer"),
        (json.dumps({"action": 1.0}).encode(), 400, "must be an integer"),
        (json.dumps({}).encode(), 400, "must be an integer"),
        (json.dumps({"action": illegal}).encode(), 422, "not legal now"),
        (json.dumps({"action": -1}).encode(), 422, "not legal now"),
        (json.dumps({"action": 2**70}).encode(), 422, "not legal now"),
        (json.dumps({"action": min(legal), "move": state["move"] + 1}).encode(), 409, "stale"),
        (json.dumps({"action": min(legal), "move": "0"}).encode(), 400, '"move"'),
        (json.dumps({"action": min(legal), "cheat": 1}).encode(), 400, "unknown key"),
        (b'{"action": 1, "pad": "' + b"x" * 9000 + b'"}', 413, "at most"),
    ]
    for body, status, message in bad:
        response = client.post(url, content=body, headers={"content-type": "application/json"})
        assert response.status_code == status, (body[:40], response.text)
        assert message in response.json()["error"]
        assert client.get(f"/api/games/{state['game_id']}").json() == state
    assert client.get("/api/games/not-a-game").status_code == 404
    assert client.post("/api/games/not-a-game/actions", json={"action": 1}).status_code == 404
    assert client.get("/api/nothing").status_code == 404
    assert "error" in client.get("/api/nothing").json()
    assert client.delete(f"/api/games/{state['game_id']}").status_code == 405
    create_errors = [
        ({"table": "3p"}, "unknown table"),
        ({"opponent": "heurisitc"}, "unknown opponent"),
        ({"opponent": "agents/pretrained/bastra_2p.pt"}, "unknown opponent"),
        ({"opponent": 3}, "unknown opponent"),
        ({"rules": {"target_score": "x"}}, "must be an int"),
        ({"rules": {"target_score": 10**6}}, "between 1 and 1000"),
        ({"rules": {"num_players": 3}}, "unknown rule field"),
        ({"rules": {"capture": "best"}}, "capture must be one of"),
        ({"rules": []}, '"rules" must be an object'),
        ({"seat": 2}, '"seat"'),
        ({"seed": -1}, '"seed"'),
        ({"endgame": "yes"}, '"endgame"'),
    ]
    for body, message in create_errors:
        response = client.post("/api/games", json=body)
        assert response.status_code == 400, (body, response.text)
        assert message in response.json()["error"], (body, response.json())
    # the game is still there and still playable
    assert play(client, state)["move"] > state["move"]


def test_game_ids_are_unguessable_and_a_game_after_its_end_refuses_plays(client):
    ids = {new_game(client, opponent="random", rules=SHORT)["game_id"] for _ in range(50)}
    assert len(ids) == 50 and all(len(i) >= 24 for i in ids)
    state = new_game(client, opponent="random", rules=SHORT, seed=1)
    while not state["done"]:
        state = play(client, state)
    response = client.post(f"/api/games/{state['game_id']}/actions", json={"action": 0})
    assert response.status_code == 409 and "over" in response.json()["error"]


def test_the_same_seed_gives_the_same_game_and_the_seed_is_optional(client):
    one = new_game(client, opponent="bastra_2p", seed=77)
    two = new_game(client, opponent="bastra_2p", seed=77)
    assert {**one, "game_id": "", "ai_ms": 0} == {**two, "game_id": "", "ai_ms": 0}
    other = [new_game(client, opponent="greedy")["hand"] for _ in range(4)]
    assert len({tuple(h) for h in other}) > 1


def test_the_store_is_bounded_games_expire_and_memory_stays_flat(players):
    import tracemalloc

    now = [0.0]
    app = create_app(players, max_games=40, ttl=60.0, clock=lambda: now[0])
    client = TestClient(app)
    store = app.state.store
    first = new_game(client, opponent="greedy", seed=1)
    now[0] += 61
    assert client.get(f"/api/games/{first['game_id']}").status_code == 404  # expired
    tracemalloc.start()
    sizes = []
    for k in range(1000):
        new_game(client, opponent="greedy")
        now[0] += 0.01
        assert len(store) <= 40
        if k in (199, 999):
            sizes.append(tracemalloc.get_traced_memory()[0])
    tracemalloc.stop()
    assert len(store) == 40
    assert sizes[1] < sizes[0] * 1.25 + 2**20, sizes  # 800 more games, no more memory
    kept = new_game(client, opponent="greedy")  # a game in use is not the one evicted
    for _ in range(60):
        client.get(f"/api/games/{kept['game_id']}")
        new_game(client, opponent="greedy")
    assert client.get(f"/api/games/{kept['game_id']}").status_code == 200


def test_replays_are_offered_by_name_only_and_bad_files_are_refused(players, tmp_path):
    from bastra_env import Rules

    rules = Rules(max_rounds=1)
    from bastra_env import raw_env

    env = raw_env(rules=rules)
    env.reset(seed=3)
    moves = []
    while not env.game.done:
        seat = env.agent_name_mapping[env.agent_selection]
        action = env.legal_actions()[0]
        moves.append((seat, action, None))
        env.step(action)
    write_record(build_record(rules, 3, moves, ["a", "b"]), tmp_path / "one.json")
    (tmp_path / "broken.json").write_text("{not json")
    (tmp_path / "notes.txt").write_text("x")
    (tmp_path.parent / "outside.json").write_text("{}")
    client = TestClient(create_app(players, replays=tmp_path))
    assert client.get("/api/replays").json() == {"replays": ["broken.json", "one.json"]}
    record = client.get("/api/replays/one.json").json()
    assert len(record["steps"]) == 48 and record["players"][0]["name"] == "a"
    assert client.get("/api/replays/broken.json").status_code == 422
    for name in ("notes.txt", "missing.json", "..%2Foutside.json", "%2Fetc%2Fpasswd"):
        response = client.get(f"/api/replays/{name}")
        assert response.status_code == 404, name
    no_replays = TestClient(create_app(players))
    assert no_replays.get("/api/replays").status_code == 404
    assert "--replays" in no_replays.get("/api/replays").json()["error"]


def test_the_leaderboard_is_served_from_a_file_named_at_start_up(players, tmp_path):
    board = {
        "results": [
            {"a": "x", "b": "y", "games": 10, "wins": 6, "draws": 0, "losses": 4,
             "win_rate": 0.6, "ci_low": 0.3, "ci_high": 0.85, "point_diff": 3.0}
        ],
        "ratings": {"x": 1535.0, "y": 1465.0},
        "rating_intervals": {"x": [1400, 1650], "y": [1350, 1600]},
    }  # fmt: skip
    path = tmp_path / "rr.json"
    path.write_text(json.dumps(board))
    client = TestClient(create_app(players, leaderboards=[path]))
    served = client.get("/api/leaderboard").json()["leaderboards"]
    assert served[0]["name"] == "rr" and served[0]["ratings"] == board["ratings"]
    assert TestClient(create_app(players)).get("/api/leaderboard").status_code == 404
    (tmp_path / "bad.json").write_text("[]")
    with pytest.raises(ValueError, match=r"not an agents\.evaluate --json file"):
        create_app(players, leaderboards=[tmp_path / "bad.json"])


def test_the_leaderboard_shows_the_policies_rated_in_the_store_beside_the_frozen_ladder(
    players, tmp_path
):
    from agents.evaluation.ladder import load_ladder
    from agents.evaluation.store import RatingStore, StoredMatch

    ladder = load_ladder("2p")
    store = RatingStore(tmp_path / "ratings.sqlite")
    match = StoredMatch("heuristic", 1, 2, [0.5, 1.0], [0.0, 0.25], [1.0, 2.0], [0.0, 0.5])
    secret = tmp_path / "private" / "mine.pt"
    for policy, identity, rating in [("greedy", "greedy", 1130.0),
                                     (str(secret), f"{secret}@0123456789abcdef", 1600.0)]:
        store.add(identity, policy, "2p", ladder.version, match, rating, 25.0, 4, "test")
    client = TestClient(create_app(players, ratings_store=store.path))
    assert client.get("/api/options").json()["leaderboard"] is True
    (board,) = client.get("/api/leaderboard").json()["leaderboards"]
    assert board["kind"] == "rated" and board["table"] == "2p"
    assert {"random", "bastra_2p"} <= {r["player"] for r in board["rows"] if r["member"]}
    rows = {r["player"]: r for r in board["rows"] if not r["member"]}
    assert rows["mine.pt @01234567"]["rating"] == 1600.0
    greedy = rows["greedy"]
    assert (greedy["low"], greedy["high"], greedy["games"]) == (1105, 1155, 4)
    assert "private" not in json.dumps(board)  # no server folder goes to a client
    assert [r["rating"] for r in board["rows"]] == sorted((r["rating"] for r in board["rows"]),
                                                          reverse=True)  # fmt: skip


def test_the_page_and_its_files_are_served_with_no_outside_url(client):
    page = client.get("/")
    assert page.status_code == 200 and "text/html" in page.headers["content-type"]
    assert '<script type="module" src="/static/main.js">' in page.text
    names = re.findall(r'(?:src|href)="([^"]+)"', page.text)
    seen = set()
    while names:
        name = names.pop()
        assert not re.match(r"^(https?:)?//", name), name
        if name.startswith(("data:", "#")) or name in seen:  # inline, or within the page
            continue
        seen.add(name)
        response = client.get(name)
        assert response.status_code == 200, name
        if name.endswith(".js"):  # a module script runs only with a JavaScript MIME type
            assert response.headers["content-type"].startswith("text/javascript"), name
            imported = re.findall(r'^import (?:[^"]*from )?"\./([\w.]+\.js)";$', response.text,
                                  re.M)  # fmt: skip
            names += ["/static/" + module for module in imported]
    modules = {path.name for path in WEB_DIR.glob("*.js")}  # every module is reached from main.js
    assert {name.removeprefix("/static/") for name in seen if name.endswith(".js")} == modules
    assert client.get("/static/../serve.py").status_code == 404


def test_the_command_line_binds_loopback_and_refuses_bad_options(capsys, monkeypatch):
    import uvicorn

    seen = {}
    monkeypatch.setattr(uvicorn, "run", lambda app, host, port, **kw: seen.update(h=host, p=port))
    assert main(["--no-packaged"]) == 0
    assert seen == {"h": "127.0.0.1", "p": 8000}
    assert main(["--port", "0"]) == 2
    assert "--port" in capsys.readouterr().err
    assert main(["--model", "no-equals-sign"]) == 2
    assert "NAME=CHECKPOINT" in capsys.readouterr().err
    assert main(["--model", "x=missing.pt", "--no-packaged"]) == 2
    assert "no checkpoint at missing.pt" in capsys.readouterr().err
    assert parse_models(["mine=a/b.pt"]) == {"mine": "a/b.pt"}
    with pytest.raises(ValueError, match="built-in"):
        Players({"greedy": "agents/pretrained/bastra_2p.pt"}, packaged=False)


def test_fifty_clients_play_whole_games_at_once_over_http(players):
    httpx = pytest.importorskip("httpx")
    import socket

    import uvicorn

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = uvicorn.Server(
        uvicorn.Config(create_app(players), host="127.0.0.1", port=port, log_level="error")
    )
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    while not server.started:
        time.sleep(0.02)
    latencies = []

    async def one_client(k, http):
        response = await http.post("/api/games", json={"opponent": "bastra_2p", "rules": SHORT})
        assert response.status_code == 201
        state = response.json()
        rng = random.Random(k)
        while not state["done"]:
            action = rng.choice(state["legal"])["action"]
            start = time.perf_counter()
            response = await http.post(
                f"/api/games/{state['game_id']}/actions",
                json={"action": action, "move": state["move"]},
            )
            latencies.append(time.perf_counter() - start)
            assert response.status_code == 200, response.text
            state = response.json()
        return state

    async def everyone():
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}", timeout=60) as http:
            return await asyncio.gather(*(one_client(k, http) for k in range(50)))

    try:
        finals = asyncio.run(everyone())
    finally:
        server.should_exit = True
        thread.join(timeout=10)
    assert len(finals) == 50 and all(f["done"] and f["move"] == 48 for f in finals)
    assert len(latencies) == 50 * 24
    latencies.sort()
    print(f"50 clients: {len(latencies)} plays, p50 {1000 * latencies[600]:.1f} ms, "
          f"p95 {1000 * latencies[1140]:.1f} ms")  # fmt: skip


def test_card_names_in_states_are_the_rules_names(client):
    state = new_game(client, opponent="greedy", seed=3)
    for name in state["hand"] + state["board"]:
        assert card_name(parse_card(name)) == name


@pytest.mark.parametrize("table", ["2p", "4p_teams"])
def test_the_coach_rates_every_legal_move_on_your_turn_only(client, table):
    from agents.apps.serve import STRONGEST

    options = client.get("/api/options").json()
    strongest = STRONGEST[table]
    assert options["strongest"][table] == strongest and strongest in options["opponents"]
    ratings = options["ratings"]
    assert ratings["bastra_2p:infer"]["rating"] > ratings["heuristic"]["rating"]
    body = {"opponent": "greedy", "partner": strongest} if table == "4p_teams" else {
        "opponent": strongest}  # fmt: skip
    state = new_game(client, table=table, seed=11, rules=SHORT, **body)
    searched = 0
    while not state["done"]:
        hint = client.get(f"/api/games/{state['game_id']}/hint")
        assert hint.status_code == 200, hint.text
        hint = hint.json()
        assert hint["player"] == strongest
        legal = sorted(option["action"] for option in state["legal"])
        assert sorted(move["action"] for move in hint["moves"]) == legal
        assert abs(sum(move["prob"] for move in hint["moves"]) - 1) < 0.01
        values = [move["search"] for move in hint["moves"]]
        assert all(v is None for v in values) or all(isinstance(v, float) for v in values)
        searched += values[0] is not None and len(legal) > 1
        state = play(client, state)
    assert searched > 0, "the strongest player never searched"
    late = client.get(f"/api/games/{state['game_id']}/hint")
    assert late.status_code == 409 and "not your turn" in late.json()["error"]
