"""The web app (agents/web) driven in a real browser: Debian's Chromium, headless, by Playwright.

A server (``agents.serve.create_app`` under uvicorn, in a thread, on a free loopback port) offers
one game record and one leaderboard made here; each test opens the page in a fresh browser
context and clicks through it as a person would. Every test also checks that the page asked
nothing of any other origin and logged no console error.

Nothing downloads a browser: without ``chromium`` on PATH or without Playwright for Python the
module is skipped. ``BASTRA_SCREENSHOT=1`` writes the mid-game screenshot to
``docs/screenshot_table.png`` (otherwise to the test's tmp folder).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import socket
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest

pytestmark = pytest.mark.slow

try:
    from playwright.sync_api import Browser, Page, expect, sync_playwright
except ImportError:  # pragma: no cover - depends on the machine
    pytest.skip(
        "Playwright for Python is not installed (pip install playwright); the browser tests "
        "use the system's Chromium and never download one",
        allow_module_level=True,
    )

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
if CHROMIUM is None:  # pragma: no cover - depends on the machine
    pytest.skip(
        "no chromium on PATH (apt-get install chromium): the browser tests run the system's "
        "Chromium and never download one",
        allow_module_level=True,
    )

import uvicorn  # noqa: E402

from agents import load_policy, make_policy  # noqa: E402
from agents.apps.serve import RATINGS, Players, create_app  # noqa: E402
from agents.evaluation.ratings import rating_intervals, round_robin  # noqa: E402
from agents.evaluation.replay import build_record, explain, write_record  # noqa: E402
from bastra_env import Rules, raw_env  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
RECORD_NAME = "greedy_vs_bastra_2p.json"
RECORD_SEED = 7
TIMEOUT_MS = 15_000


# ------------------------------------------------------------------------------------ the data
def make_record() -> dict[str, Any]:
    """One single-round 2p game, greedy (seat 0) against the packaged network (seat 1), with the
    network's view of each of its moves."""
    rules = Rules(num_players=2, max_rounds=1)
    env = raw_env(rules=rules)
    env.reset(seed=RECORD_SEED)
    policies = [make_policy("greedy"), load_policy("bastra_2p")]
    moves = []
    while not env.game.done:
        agent = env.agent_selection
        seat = env.agent_name_mapping[agent]
        observation = env.observe(agent)
        policy = policies[seat]
        action = int(policy.act(observation, env=env))
        moves.append(
            (seat, action, explain(policy, observation["observation"], observation["action_mask"]))
        )
        env.step(action)
    return build_record(rules, RECORD_SEED, moves, ["greedy", "bastra_2p"], table="2p")


def make_leaderboard() -> dict[str, Any]:
    """A real round-robin of the baselines, as ``agents.evaluate --json`` writes it."""
    names = ["random", "greedy", "heuristic"]
    results, ratings = round_robin(names, table="2p", deals=5, mode="round")
    intervals = rating_intervals(names, results, samples=50)
    return {
        "results": [r.to_json() for r in results],
        "ratings": ratings,
        "rating_intervals": {name: list(span) for name, span in intervals.items()},
    }


# ------------------------------------------------------------------------------------ server
class Server:
    """``app`` served by uvicorn in a daemon thread, on a loopback port the OS picked."""

    def __init__(self, app: Any) -> None:
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}"
        config = uvicorn.Config(app, log_level="warning", lifespan="off")
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(
            target=self.server.run, kwargs={"sockets": [self.sock]}, daemon=True
        )

    def __enter__(self) -> Server:
        self.thread.start()
        deadline = time.monotonic() + 20
        while not self.server.started:
            if not self.thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError("the test server did not start")
            time.sleep(0.02)
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=10)
        self.sock.close()


@dataclass
class Site:
    url: str
    record: dict[str, Any]
    record_path: Path
    leaderboard: dict[str, Any]


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    folder = tmp_path_factory.mktemp("web")
    replays = folder / "replays"
    record = make_record()
    record_path = write_record(record, replays / RECORD_NAME)
    leaderboard = make_leaderboard()
    board_path = folder / "round_robin.json"
    board_path.write_text(json.dumps(leaderboard))
    from agents.evaluation.ladder import load_ladder
    from agents.evaluation.store import RatingStore, StoredMatch

    store = RatingStore(folder / "ratings.sqlite")
    store.add("mine", "mine", "2p", load_ladder("2p").version,
              StoredMatch("heuristic", 1, 1, [0.5], [0.0], [0.0], [0.0]), 1590.0, 18.0, 2, "test")
    app = create_app(Players(), replays=replays, leaderboards=[board_path],
                     ratings_store=store.path)  # fmt: skip
    try:
        with Server(app) as server:
            yield Site(server.url, record, record_path, leaderboard)
    finally:
        torch.set_num_threads(threads)


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            yield chromium
        finally:
            chromium.close()


@dataclass
class Tab:
    """A page and what it did: every request's URL, every console error and page error."""

    page: Page
    base: str
    requests: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)

    def open(self, hash_: str = "#play") -> Page:
        self.page.goto(f"{self.base}/{hash_}")
        self.page.wait_for_selector("body[data-ready='1']", timeout=TIMEOUT_MS)
        return self.page

    def assert_clean(self) -> None:
        foreign = [u for u in self.requests if not u.startswith(self.base + "/")]
        assert not foreign, f"requests to other origins: {foreign}"
        assert self.requests, "no request was recorded"
        assert not self.errors, f"console errors: {self.errors}"


def new_tab(
    browser: Browser, base: str, width: int = 1280, height: int = 800, touch: bool = False
) -> Iterator[Tab]:
    context = browser.new_context(
        viewport={"width": width, "height": height}, has_touch=touch, is_mobile=touch
    )
    context.set_default_timeout(TIMEOUT_MS)
    page = context.new_page()
    tab = Tab(page, base)
    page.on("request", lambda request: tab.requests.append(request.url))
    page.on(
        "console",
        lambda msg: tab.errors.append(f"{msg.type}: {msg.text}") if msg.type == "error" else None,
    )
    page.on("pageerror", lambda error: tab.errors.append(f"page error: {error}"))
    try:
        yield tab
    finally:
        context.close()


@pytest.fixture
def tab(browser: Browser, site: Site) -> Iterator[Tab]:
    yield from new_tab(browser, site.url)


# ------------------------------------------------------------------------------------ helpers
def tid(page: Page, name: str, **attrs: str) -> Any:
    selector = f'[data-testid="{name}"]' + "".join(f'[data-{k}="{v}"]' for k, v in attrs.items())
    return page.locator(selector)


def fill_new_game(page: Page, table: str, opponent: str, **fields: Any) -> None:
    tid(page, "table-select").select_option(table)
    tid(page, "opponent-select").select_option(opponent)
    if table == "4p_teams":
        tid(page, "partner-select").select_option(fields.pop("partner", opponent))
    if "seed" in fields:
        tid(page, "seed-input").fill(str(fields.pop("seed")))
    for name, value in fields.items():
        box = tid(page, f"rule-{name}")
        if isinstance(value, bool):
            box.set_checked(value)
        elif box.evaluate("e => e.tagName") == "SELECT":
            box.select_option(str(value))
        else:
            box.fill("" if value is None else str(value))


def wait_for_turn(page: Page) -> None:
    """Until the table is idle and it is the human's turn, or the game is over."""
    page.wait_for_selector(
        "[data-testid='table'][data-busy='0'][data-your-turn='1'],"
        " [data-testid='table'][data-busy='0'][data-done='1']",
        timeout=TIMEOUT_MS,
    )


def table_data(page: Page) -> dict[str, str]:
    return tid(page, "table").evaluate("e => Object.assign({}, e.dataset)")


def play_one_card(page: Page, tap: bool = False, check: Any = None) -> bool:
    """Click (or ``tap``) a playable card (one with several captures when there is one); when
    the chooser opens, ``check`` it and pick its last option. Returns whether the chooser was
    used."""
    before = table_data(page)["move"]
    several = page.locator("[data-testid='hand-card']:enabled:not([data-options='1'])")
    card = several.first if several.count() else page.locator("[data-testid='hand-card']:enabled")
    card = card.first
    ways = int(card.get_attribute("data-options"))
    card.tap() if tap else card.click()
    chose = False
    if ways > 1:
        options = tid(page, "capture-option")
        expect(tid(page, "capture-chooser")).to_be_visible()
        assert options.count() == ways
        for text in options.all_inner_texts():
            assert "takes" in text or "board" in text
        if check is not None:
            check(tid(page, "capture-chooser"))
        options.last.tap() if tap else options.last.click()
        chose = True
    page.wait_for_function(
        "before => { const t = document.querySelector(\"[data-testid='table']\");"
        " return t.dataset.move !== before || t.dataset.done === '1'; }",
        arg=before,
        timeout=TIMEOUT_MS,
    )
    return chose


def seed_with_a_choice(base: str, table: str) -> int:
    """A game seed whose first position offers the human a card with several captures (found
    through the API, so that the chooser is exercised whatever the dealing code does)."""
    with httpx.Client(base_url=base, timeout=10) as client:
        for seed in range(500):
            body = {"table": table, "opponent": "greedy", "seed": seed, "rules": {"max_rounds": 1}}
            state = client.post("/api/games", json=body).json()
            cards = [option["card"] for option in state["legal"]]
            if len(cards) > len(set(cards)):
                return seed
    raise AssertionError("no seed below 500 gives the first player a choice of captures")


def shown_scores(page: Page) -> list[int]:
    boxes = tid(page, "side-score")
    return [int(boxes.nth(i).get_attribute("data-score")) for i in range(boxes.count())]


def breakdown(locator: Any) -> dict[str, list[str]]:
    rows = {}
    for row in locator.locator("tbody tr").all():
        rows[row.get_attribute("data-row")] = row.locator("td").all_inner_texts()
    return rows


def screenshot_path(tmp_path: Path) -> Path:
    if os.environ.get("BASTRA_SCREENSHOT") == "1":
        return ROOT / "docs" / "screenshot_table.png"
    return tmp_path / "screenshot_table.png"


# ------------------------------------------------------------------------------------ tests
def test_a_whole_2p_game_by_clicking(tab: Tab, site: Site, tmp_path: Path) -> None:
    seed = seed_with_a_choice(site.url, "2p")
    page = tab.open("#play")
    fill_new_game(page, "2p", "greedy", seed=seed, max_rounds=1)
    tid(page, "new-game").click()
    wait_for_turn(page)
    game_id = table_data(page)["gameId"]
    assert tid(page, "hand-card").count() == 4
    assert tid(page, "opponent-hand").get_attribute("data-count") == "4"
    assert tid(page, "opponent-hand").locator(".card.back").count() == 4
    assert tid(page, "opponent-hand").locator("[data-card]").count() == 0  # never their faces
    choices = 0
    screenshot = screenshot_path(tmp_path)
    shot = b""
    for _ in range(30):
        wait_for_turn(page)
        if table_data(page)["done"] == "1":
            break
        choices += play_one_card(page)
        if table_data(page)["move"] in ("8", "9") and not shot:  # a fresh hand, mid-round
            wait_for_turn(page)
            page.mouse.move(0, 0)
            shot = page.screenshot(path=str(screenshot))
        if tid(page, "round-result").is_visible():
            break
    assert choices >= 1, "the capture chooser never appeared"
    assert len(shot) > 10_000 and screenshot.read_bytes() == shot

    # the game is over: the round's breakdown, then the winner banner
    expect(tid(page, "round-result")).to_be_visible()
    state = httpx.get(f"{site.url}/api/games/{game_id}").json()
    assert state["done"] and state["move"] == 48
    rows = breakdown(tid(page, "round-breakdown"))
    result = state["round_results"][0]
    for key in ("cards", "card_points", "most_cards", "bastra_points", "total", "scores"):
        assert rows[key] == [str(v) for v in result[key]], key
    tid(page, "round-result-close").click()
    expect(tid(page, "round-result")).to_be_hidden()
    banner = tid(page, "winner")
    expect(banner).to_be_visible()
    if state["draw"]:
        expect(banner).to_contain_text("draw")
    elif state["winner"] == state["side"]:
        expect(banner).to_contain_text("You win")
    else:
        expect(banner).to_contain_text("greedy wins")
    assert shown_scores(page) == state["scores"]
    expect(tid(page, "hand-card")).to_have_count(0)
    for seat in range(2):
        taken = tid(page, "seat", seat=str(seat)).locator("[data-testid='seat-captured']")
        assert taken.get_attribute("data-count") == str(state["captured"][seat])
    last = state["last_play"]
    shown = tid(page, "last-play")
    expect(shown).to_contain_text("You" if last["seat"] == state["seat"] else "greedy")
    cards = [c.get_attribute("data-card") for c in shown.locator(".chip").all()]
    assert cards == [last["card"], *last["takes"]]
    assert (shown.locator("[data-testid='bastra-badge']").count() == 1) == bool(last["bastra"])

    # the finished game opens in the replay view
    tid(page, "watch-replay").click()
    page.wait_for_url(re.compile(r"#replay$"))
    expect(tid(page, "replay-counter")).to_have_text("Move 1 / 48")
    record = httpx.get(f"{site.url}/api/games/{game_id}/record").json()
    first = record["steps"][0]
    expect(tid(page, "replay-board-card")).to_have_count(len(first["before"]["board"]))
    hands = tid(page, "replay-hand")
    assert hands.count() == 2
    for seat in range(2):
        shown = tid(page, "replay-hand", seat=str(seat)).locator("[data-card]")
        assert [c.get_attribute("data-card") for c in shown.all()] == first["before"]["hands"][seat]
    tab.assert_clean()


def test_a_team_round_by_clicking(tab: Tab, site: Site) -> None:
    page = tab.open("#play")
    fill_new_game(page, "4p_teams", "greedy", partner="random", max_rounds=1)
    tid(page, "seat-select").select_option("1")
    tid(page, "new-game").click()
    wait_for_turn(page)
    game_id = table_data(page)["gameId"]
    seats = tid(page, "seat")
    assert seats.count() == 4
    assert tid(page, "opponent-hand").count() == 3
    assert tid(page, "side-score").count() == 2
    expect(tid(page, "scores")).to_contain_text("You + partner")
    expect(tid(page, "scores")).to_contain_text("Opponents")
    partner = tid(page, "seat", seat="3")  # seats 1 and 3 are partners
    expect(partner.locator("[data-testid='seat-name']")).to_have_text("random")
    expect(partner.locator(".tag.team")).to_have_text("partner")
    expect(tid(page, "seat", seat="0").locator(".tag.team")).to_have_text("opponent")
    for _ in range(20):
        wait_for_turn(page)
        if table_data(page)["done"] == "1":
            break
        play_one_card(page)
    assert table_data(page)["done"] == "1"
    modal = tid(page, "round-result")
    expect(modal).to_be_visible()
    expect(modal).to_contain_text("Round 1 result")
    state = httpx.get(f"{site.url}/api/games/{game_id}").json()
    result = state["round_results"][0]
    table = tid(page, "round-breakdown")
    assert table.locator("thead th").all_inner_texts()[1:] == ["Opponents", "You + partner"]
    rows = breakdown(table)
    assert set(rows) == {
        "cards", "card_points", "most_cards", "bastras", "bastra_points", "total", "scores"
    }  # fmt: skip
    assert rows["cards"] == [str(v) for v in result["cards"]]
    assert rows["total"] == [str(v) for v in result["total"]]
    assert sum(map(int, rows["card_points"])) == 13
    page.keyboard.press("Escape")
    expect(modal).to_be_hidden()
    expect(tid(page, "winner")).to_be_visible()
    assert shown_scores(page) == state["scores"]
    tab.assert_clean()


def test_a_replay_from_the_server(tab: Tab, site: Site) -> None:
    record = site.record
    steps = record["steps"]
    total = len(steps)
    page = tab.open("#replay")
    select = tid(page, "replay-select")
    expect(select.locator("option")).to_have_count(1)
    assert select.input_value() == RECORD_NAME
    tid(page, "replay-open").click()
    counter = tid(page, "replay-counter")
    expect(counter).to_have_text(f"Move 1 / {total}")
    expect(tid(page, "replay-info")).to_contain_text("bastra_2p")

    def board() -> list[str]:
        cards = tid(page, "replay-board-card").all()
        return [c.get_attribute("data-card") for c in cards]

    def hand(seat: int) -> list[str]:
        cards = tid(page, "replay-hand", seat=str(seat)).locator("[data-card]").all()
        return [c.get_attribute("data-card") for c in cards]

    assert board() == steps[0]["before"]["board"]
    assert hand(0) == steps[0]["before"]["hands"][0]
    assert hand(1) == steps[0]["before"]["hands"][1]  # every hand face up
    expect(tid(page, "no-policy")).to_be_visible()  # greedy has no network
    forward = tid(page, "replay-forward")
    for _ in range(4):
        forward.click()
    expect(counter).to_have_text(f"Move 5 / {total}")
    assert hand(0) == steps[4]["before"]["hands"][0]
    assert board() == steps[4]["before"]["board"]
    assert hand(0) != steps[0]["before"]["hands"][0]  # a shown card changed
    tid(page, "replay-back").click()
    expect(counter).to_have_text(f"Move 4 / {total}")
    assert board() == steps[3]["before"]["board"]
    step = steps[3]
    caption = tid(page, "replay-caption")
    expect(caption).to_contain_text(f"seat {step['seat']}")
    assert caption.locator(".chip").first.get_attribute("data-card") == step["card"]

    # a learned player's step: its top actions and value
    page.keyboard.press("ArrowLeft")
    page.keyboard.press("ArrowLeft")
    expect(counter).to_have_text(f"Move 2 / {total}")
    policy = steps[1]["policy"]
    assert steps[1]["seat"] == 1 and policy is not None
    bars = tid(page, "policy-bar")
    expect(bars).to_have_count(len(policy["top"]))
    for bar, option in zip(bars.all(), policy["top"], strict=True):
        assert float(bar.get_attribute("data-prob")) == pytest.approx(option["prob"])
        assert bar.locator(".chip").first.get_attribute("data-card") == option["card"]
        expect(bar.locator(".policy-prob")).to_have_text(re.compile(r"^\d+(\.\d)?%$"))
    value = policy["value"]
    expect(tid(page, "policy-value")).to_have_text(f"value {value:+.2f}")
    expect(tid(page, "policy-bar").locator(".played")).to_have_count(1)

    # play and pause
    tid(page, "replay-speed").select_option("8")
    play = tid(page, "replay-play")
    play.click()
    expect(play).to_have_text("Pause")
    moved = "() => document.querySelector(\"[data-testid='replay-counter']\").dataset.move >= 5"
    page.wait_for_function(moved)
    play.click()
    expect(play).to_have_text("Play")
    paused = counter.inner_text()
    page.wait_for_timeout(400)
    assert counter.inner_text() == paused

    # the end: the round's breakdown after its last move
    tid(page, "replay-end").click()
    expect(counter).to_have_text(f"Round 1 over · {total} / {total}")
    result = record["round_results"][0]
    rows = breakdown(tid(page, "replay-round-result"))
    assert rows["scores"] == [str(v) for v in result["scores"]]
    expect(tid(page, "replay-winner")).to_be_visible()
    tid(page, "replay-start").click()
    expect(counter).to_have_text(f"Move 1 / {total}")

    # the same record from a local file, read in the browser: no upload, no request
    tid(page, "replay-forward").click()
    asked = len(tab.requests)
    tid(page, "replay-file").set_input_files(str(site.record_path))
    expect(tid(page, "replay-info")).to_contain_text(f"{RECORD_NAME}")
    expect(counter).to_have_text(f"Move 1 / {total}")
    assert len(tab.requests) == asked
    tab.assert_clean()


def test_the_leaderboard(tab: Tab, site: Site) -> None:
    from agents.evaluation.ladder import load_ladder

    page = tab.open("#leaderboard")
    rows = tid(page, "rating-row")
    expect(rows).to_have_count(3)
    ratings = site.leaderboard["ratings"]
    order = sorted(ratings, key=ratings.get, reverse=True)
    assert [r.get_attribute("data-player") for r in rows.all()] == order
    intervals = site.leaderboard["rating_intervals"]
    for name in ratings:
        row = tid(page, "rating-row", player=name)
        expect(row).to_contain_text(f"{ratings[name]:.0f}")
        low, high = intervals[name]
        expect(row).to_contain_text(f"{low:.0f} – {high:.0f}")
    cells = tid(page, "h2h-cell")
    expect(cells).to_have_count(6)
    for result in site.leaderboard["results"]:
        cell = tid(page, "h2h-cell", row=result["a"], col=result["b"])
        assert float(cell.get_attribute("data-rate")) == pytest.approx(result["win_rate"])
        assert "95% CI" in cell.get_attribute("title")
        mirror = tid(page, "h2h-cell", row=result["b"], col=result["a"])
        assert float(mirror.get_attribute("data-rate")) == pytest.approx(1 - result["win_rate"])
    # the policies rated with bastra rate, placed among the frozen ladder's members
    rated = tid(page, "rated-row")
    expect(rated).to_have_count(len(load_ladder("2p").ratings) + 1)
    expect(tid(page, "rated-row", player="mine")).to_contain_text("1572 – 1608")
    values = [float(r.get_attribute("data-rating")) for r in rated.all()]
    assert values == sorted(values, reverse=True)
    tab.assert_clean()


def test_api_errors_are_shown(tab: Tab) -> None:
    page = tab.open("#play")
    fill_new_game(page, "2p", "greedy", target_score=5000)
    tid(page, "new-game").click()
    message = tid(page, "message")
    expect(message).to_be_visible()
    expect(message).to_contain_text("target_score must be between 1 and 1000")
    expect(tid(page, "no-game")).to_be_visible()
    tid(page, "message-close").click()
    expect(message).to_be_hidden()
    # the 400 answer itself is logged by the browser as a failed resource; nothing else is
    tab.errors[:] = [e for e in tab.errors if "status of 400" not in e]
    tab.assert_clean()


def test_a_bare_server_says_what_it_lacks(browser: Browser) -> None:
    with Server(create_app(Players(packaged=False))) as server:
        for tab in new_tab(browser, server.url):
            page = tab.open("#leaderboard")
            expect(tid(page, "leaderboard-none")).to_have_text(
                "No leaderboard loaded: start the server with --leaderboard FILE"
            )
            tid(page, "nav-replay").click()
            expect(tid(page, "replay-server-note")).to_contain_text("offers no replays")
            expect(tid(page, "replay-open")).to_be_disabled()
            tid(page, "nav-play").click()
            options = tid(page, "opponent-select").locator("option")
            assert options.all_inner_texts() == [
                "random", "greedy", "heuristic", "pimc:64", "ismcts:400"
            ]  # fmt: skip
            tab.assert_clean()


# ------------------------------------------------------------------------------------ screens
SCREENS = {"phone-360": (360, 740), "phone-390": (390, 844), "tablet": (768, 1024),
           "laptop": (1280, 800)}  # fmt: skip


def box(locator: Any) -> dict[str, float]:
    found = locator.bounding_box()
    assert found is not None, "not rendered"
    return found


def inside_the_width(page: Page, locator: Any, width: int) -> None:
    """Every element of ``locator`` lies within the viewport's width."""
    for i in range(locator.count()):
        b = box(locator.nth(i))
        assert b["x"] >= -0.5 and b["x"] + b["width"] <= width + 0.5, (i, b, width)


def check_layout(page: Page, width: int, height: int) -> None:
    """The layout facts of a screen: no sideways scrolling; on narrow screens the table fills
    the width and comes before the form; the hand's cards are whole and 44 px or wider."""
    scroll = page.evaluate("document.documentElement.scrollWidth")
    assert scroll <= width, f"the page scrolls sideways: {scroll} px of content in {width}"
    felt = box(tid(page, "table"))
    form = box(tid(page, "new-game-form"))
    if width <= 820:
        assert felt["width"] >= 0.9 * width, (felt, width)
        assert felt["y"] < form["y"], "the form should move below the table once a game is on"
    cards = tid(page, "hand-card")
    inside_the_width(page, cards, width)
    for i in range(cards.count()):
        assert box(cards.nth(i))["width"] >= 44, "a card too narrow to tap"
    inside_the_width(page, tid(page, "board-card"), width)
    inside_the_width(page, tid(page, "opponent-hand"), width)
    inside_the_width(page, tid(page, "deck"), width)


def fits_the_screen(width: int, height: int) -> Any:
    def check(locator: Any) -> None:
        b = box(locator)
        assert b["x"] >= -0.5 and b["x"] + b["width"] <= width + 0.5, (b, width)
        assert b["y"] >= -0.5 and b["y"] + b["height"] <= height + 0.5, (b, height)

    return check


def screen_shot(tmp_path: Path, name: str) -> Path:
    if os.environ.get("BASTRA_SCREENSHOT") == "1":
        return ROOT / "docs" / f"screenshot_{name}.png"
    return tmp_path / f"screenshot_{name}.png"


def play_by_tapping(page: Page, width: int, height: int) -> int:
    """Tap through a game until it ends, checking the layout at every turn and the chooser and
    the round's result dialog on the screen. Returns the capture choices made."""
    choices = 0
    fits = fits_the_screen(width, height)
    for _ in range(60):
        wait_for_turn(page)
        if tid(page, "round-result").is_visible():
            fits(page.locator(".modal"))
            tid(page, "round-result-close").tap()
            expect(tid(page, "round-result")).to_be_hidden()
        if table_data(page)["done"] == "1":
            break
        check_layout(page, width, height)
        choices += play_one_card(page, tap=True, check=fits)
    assert table_data(page)["done"] == "1"
    return choices


@pytest.mark.parametrize(
    "table, screen",
    [("2p", "phone-390"), ("2p", "tablet"), ("4p_teams", "phone-360"), ("4p_teams", "laptop")],
)
def test_a_whole_game_by_tapping_on_phones_a_tablet_and_a_laptop(
    browser: Browser, site: Site, tmp_path: Path, table: str, screen: str
) -> None:
    """A whole single-round game by tapping: a 2p game on a 390 px phone and a tablet, a team
    round on a 360 px phone and a laptop; the layout checked at every turn."""
    width, height = SCREENS[screen]
    for tab in new_tab(browser, site.url, width, height, touch=True):
        page = tab.open("#play")
        if width <= 820:  # before a game the form comes first
            assert box(tid(page, "new-game-form"))["y"] < box(tid(page, "table"))["y"]
        if table == "2p":
            seed = seed_with_a_choice(site.url, "2p")
            fill_new_game(page, "2p", "greedy", seed=seed, max_rounds=1)
        else:
            fill_new_game(page, table, "greedy", partner="heuristic", seed=4, max_rounds=1)
        tid(page, "new-game").tap()
        wait_for_turn(page)
        check_layout(page, width, height)
        assert tid(page, "opponent-hand").count() == (1 if table == "2p" else 3)
        name = f"{screen}_{'2p' if table == '2p' else 'teams'}"
        page.screenshot(path=str(screen_shot(tmp_path, name)), full_page=True)
        choices = play_by_tapping(page, width, height)
        if table == "2p":  # the seed offers a choice of captures at once
            assert choices >= 1, "the capture chooser never appeared"
        expect(tid(page, "winner")).to_be_visible()
        fits_the_screen(width, height)(tid(page, "winner"))
        tab.assert_clean()


def test_the_coach_marks_the_hand_and_the_chooser_and_the_form_rates_the_players(
    tab: Tab, site: Site, tmp_path: Path
) -> None:
    rated = json.loads(RATINGS.read_text())["ratings"]  # the file the form rates from
    page = tab.open("#play")
    fill_new_game(page, "2p", "bastra_2p:infer")
    note = tid(page, "strength-note")
    expect(note).to_contain_text(f"bastra_2p:infer: rated {round(rated['bastra_2p:infer'])}")
    expect(note).to_contain_text("the strongest")
    fill_new_game(page, "4p_teams", "greedy", partner="bastra_4p_teams:infer")
    expect(note).to_contain_text(f"greedy: rated {round(rated['greedy'])}")
    expect(note).to_contain_text("bastra_4p_teams:infer: not rated")

    seed = seed_with_a_choice(site.url, "2p")
    fill_new_game(page, "2p", "greedy", seed=seed, max_rounds=1)
    tid(page, "new-game").click()
    wait_for_turn(page)
    expect(tid(page, "hint-mark")).to_have_count(0)  # off until asked for
    tid(page, "hint-toggle").check()
    playable = page.locator("[data-testid='hand-card']:enabled")
    expect(tid(page, "hint-mark")).to_have_count(playable.count())
    game_id = table_data(page)["gameId"]
    hint = httpx.get(f"{site.url}/api/games/{game_id}/hint").json()
    assert hint["player"] == "bastra_2p:infer"
    state = httpx.get(f"{site.url}/api/games/{game_id}").json()
    by_card: dict[str, float] = {}
    for option in state["legal"]:
        prob = next(m["prob"] for m in hint["moves"] if m["action"] == option["action"])
        by_card[option["card"]] = by_card.get(option["card"], 0.0) + prob
    for i in range(playable.count()):
        card = playable.nth(i)
        shown = float(card.locator("[data-testid='hint-mark']").get_attribute("data-prob"))
        assert abs(shown - by_card[card.get_attribute("data-card")]) < 1e-3
    assert abs(sum(by_card.values()) - 1) < 0.01
    expect(page.locator("button.card.hint-best")).to_have_count(1)
    several = page.locator("[data-testid='hand-card']:enabled:not([data-options='1'])").first
    several.click()
    chooser = tid(page, "capture-chooser")
    expect(chooser).to_be_visible()
    options = tid(page, "capture-option")
    expect(chooser.locator("[data-testid='hint-mark']")).to_have_count(options.count())
    page.screenshot(path=str(screen_shot(tmp_path, "coach")))
    tid(page, "capture-cancel").click()
    tid(page, "hint-toggle").uncheck()
    expect(tid(page, "hint-mark")).to_have_count(0)
    tab.assert_clean()
