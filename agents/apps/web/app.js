/* Bastra in the browser: play the agents, watch replays, read a leaderboard.
   Plain JavaScript, no framework, no build step; it talks only to this server's JSON API. */
"use strict";

(() => {
  // ------------------------------------------------------------------------------ cards
  const SUITS = { C: "\u2663", D: "\u2666", H: "\u2665", S: "\u2660" };
  const SUIT_NAMES = { C: "clubs", D: "diamonds", H: "hearts", S: "spades" };
  const RANK_NAMES = { A: "ace", J: "jack", Q: "queen", K: "king" };
  const TABLE_LABELS = { "2p": "2 players", "4p_teams": "4 players, two teams" };
  const RULE_LABELS = {
    target_score: "Target score",
    max_rounds: "Max rounds",
    tie_break: "On a tie",
    capture: "Captures",
    bastra_points: "Bastra points",
    jack_bastra_points: "Jack bastra points",
    last_play_bastra: "Last-play bastra",
    most_cards_points: "Most-cards points",
  };
  const RULE_HINTS = {
    target_score: "the score that ends the game",
    max_rounds: "stop after this many rounds (empty: no limit)",
    tie_break: "a tie at the target: play more rounds, or call it a draw",
    capture: "choose among several captures, or let the engine take the largest",
    bastra_points: "points for clearing the board",
    jack_bastra_points: "points for a jack taking a lone jack",
    last_play_bastra: "does clearing the board on a round's last play count as a bastra",
    most_cards_points: "points for the side with the most cards",
  };

  function parseCard(name) {
    const suit = name.slice(-1);
    let rank = name.slice(0, -1);
    if (rank === "T") rank = "10";
    return { rank, suit, red: suit === "D" || suit === "H" };
  }

  function cardLabel(name) {
    const { rank, suit } = parseCard(name);
    return rank + SUITS[suit];
  }

  function cardTitle(name) {
    const { rank, suit } = parseCard(name);
    return `${RANK_NAMES[rank] || rank} of ${SUIT_NAMES[suit]}`;
  }

  // ------------------------------------------------------------------------------ DOM helpers
  const $ = (selector, root = document) => root.querySelector(selector);

  function h(tag, attrs, ...children) {
    const node = document.createElement(tag);
    for (const [key, value] of Object.entries(attrs || {})) {
      if (value === null || value === undefined || value === false) continue;
      if (key === "class") node.className = value;
      else if (key === "text") node.textContent = value;
      else if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
      else node.setAttribute(key, value === true ? "" : String(value));
    }
    append(node, children);
    return node;
  }

  function append(node, children) {
    for (const child of children.flat(Infinity)) {
      if (child === null || child === undefined || child === false) continue;
      node.append(child instanceof Node ? child : document.createTextNode(String(child)));
    }
    return node;
  }

  function clear(node, ...children) {
    node.replaceChildren();
    return append(node, children);
  }

  /** A card drawn face up; ``tag`` "button" for a card one can play. */
  function cardFace(name, opts = {}) {
    const { rank, suit, red } = parseCard(name);
    const classes = ["card", red ? "red" : "black", "JQK".includes(rank) ? "court" : "pip-card"];
    if (opts.size) classes.push(opts.size);
    if (opts.classes) classes.push(...opts.classes);
    const corner = (where) =>
      h("span", { class: `corner ${where}`, "aria-hidden": "true" },
        h("b", {}, rank), h("i", {}, SUITS[suit]));
    const centre = "JQK".includes(rank)
      ? h("span", { class: "centre", "aria-hidden": "true" },
        h("span", { class: "court-frame" }, h("b", {}, rank), h("i", {}, SUITS[suit])))
      : h("span", { class: "centre", "aria-hidden": "true" }, SUITS[suit]);
    return h(opts.tag || "div", {
      class: classes.join(" "),
      "data-card": name,
      "data-testid": opts.testid,
      title: opts.title || cardTitle(name),
      type: opts.tag === "button" ? "button" : null,
      "aria-label": cardTitle(name),
    }, corner("tl"), centre, corner("br"));
  }

  function cardBack(size) {
    return h("div", { class: `card back ${size || ""}`, "aria-hidden": "true" });
  }

  /** A card as a word in a sentence: "10♦" in its colour. */
  function chip(name) {
    return h("span", { class: `chip ${parseCard(name).red ? "red" : "black"}`, "data-card": name },
      cardLabel(name));
  }

  function chips(names) {
    return names.map(chip);
  }

  function bastraBadge(kind) {
    if (!kind) return null;
    return h("span", { class: "badge bastra", "data-testid": "bastra-badge" },
      kind === "jack" ? "jack bastra!" : "bastra!");
  }

  // ------------------------------------------------------------------------------ API
  class ApiError extends Error {
    constructor(status, message) {
      super(message);
      this.status = status;
    }
  }

  async function api(path, options = {}) {
    const init = { method: options.method || "GET", headers: { Accept: "application/json" } };
    if (options.body !== undefined) {
      init.headers["Content-Type"] = "application/json";
      init.body = JSON.stringify(options.body);
    }
    let response;
    try {
      response = await fetch(path, init);
    } catch (error) {
      throw new ApiError(0, `the server can't be reached (${error.message})`);
    }
    let data = null;
    try {
      data = await response.json();
    } catch (error) {
      data = null;
    }
    if (!response.ok) {
      const text = data && typeof data.error === "string" ? data.error : response.statusText;
      throw new ApiError(response.status, text || `HTTP ${response.status}`);
    }
    return data;
  }

  // ------------------------------------------------------------------------------ messages
  const message = $("#message");

  function showMessage(text, kind = "error") {
    message.hidden = false;
    message.dataset.kind = kind;
    $(".message-text", message).textContent = text;
  }

  function hideMessage() {
    message.hidden = true;
  }

  function showError(error) {
    showMessage(error instanceof Error ? error.message : String(error));
  }

  $(".message-close", message).addEventListener("click", hideMessage);

  // ------------------------------------------------------------------------------ views
  const VIEWS = ["play", "replay", "leaderboard"];
  let options = null;

  function route() {
    let view = location.hash.replace(/^#/, "");
    if (!VIEWS.includes(view)) view = "play";
    for (const name of VIEWS) {
      $(`#view-${name}`).hidden = name !== view;
      const link = $(`.tabs a[data-view="${name}"]`);
      link.classList.toggle("active", name === view);
      if (name === view) link.setAttribute("aria-current", "page");
      else link.removeAttribute("aria-current");
    }
    document.body.dataset.view = view;
    if (view !== "replay") replayStop();
    if (!options) return;
    if (view === "replay") loadReplayList();
    if (view === "leaderboard") loadLeaderboard();
  }

  window.addEventListener("hashchange", route);

  // ------------------------------------------------------------------------------ new-game form
  const form = $("#new-game-form");
  form.noValidate = true; // the server's own messages say what is wrong with a value

  function seatsOf(table) {
    const n = parseInt(table, 10);
    return Number.isFinite(n) && n > 0 ? n : 2;
  }

  function fillSelect(select, values, labels = {}, selected = undefined) {
    clear(select, values.map((value) =>
      h("option", { value, selected: value === selected }, labels[value] || value)));
  }

  function buildForm() {
    const table = $("#f-table");
    fillSelect(table, options.tables, TABLE_LABELS, options.tables[0]);
    fillSelect($("#f-opponent"), options.opponents);
    fillSelect($("#f-partner"), options.opponents);
    table.addEventListener("change", tableChanged);
    $("#f-opponent").addEventListener("change", strengthNote);
    $("#f-partner").addEventListener("change", strengthNote);
    tableChanged();
    const box = $("#rule-fields");
    clear(box);
    for (const field of options.rules) {
      const id = `r-${field.name}`;
      const label = h("label", { for: id, title: RULE_HINTS[field.name] || "" },
        RULE_LABELS[field.name] || field.name.replace(/_/g, " "));
      let input;
      if (field.type === "bool") {
        input = h("span", {}, h("input", {
          type: "checkbox", id, name: field.name, checked: field.default === true,
          "data-testid": `rule-${field.name}`, "data-type": "bool",
        }));
      } else if (field.type === "choice") {
        input = h("select", { id, name: field.name, "data-testid": `rule-${field.name}`,
          "data-type": "choice" });
        fillSelect(input, field.choices, {}, field.default);
      } else {
        input = h("input", {
          type: "number", id, name: field.name, step: 1, min: field.min, max: field.max,
          value: field.default === null ? "" : field.default,
          placeholder: field.nullable ? "none" : "",
          "data-testid": `rule-${field.name}`, "data-type": "int",
          "data-nullable": field.nullable ? "1" : null,
        });
      }
      append(box, [label, input]);
    }
    $("#new-game").disabled = false;
  }

  function tableChanged() {
    const table = $("#f-table").value;
    const fallback = options.opponents[0];
    const wanted = (options.default_opponent || {})[table];
    const opponent = options.opponents.includes(wanted) ? wanted : fallback;
    $("#f-opponent").value = opponent;
    $("#f-partner").value = opponent;
    const n = seatsOf(table);
    const seat = $("#f-seat");
    const labels = {};
    for (let s = 0; s < n; s += 1) labels[s] = s === 0 ? "0 (plays first)" : String(s);
    fillSelect(seat, [...Array(n).keys()].map(String), labels, "0");
    for (const node of form.querySelectorAll(".team-only")) node.hidden = n < 4;
    strengthNote();
  }

  function ratingOf(name) {
    const found = (options.ratings || {})[name];
    if (!found) return "not rated";
    const strongest = Object.values(options.strongest || {}).includes(name) ? ", the strongest" : "";
    return `rated ${found.rating} (${found.low}\u2013${found.high})${strongest}`;
  }

  function strengthNote() {
    // how strong each choice is, from the packaged 2p round-robin's ratings
    const note = $("#strength-note");
    const opponent = $("#f-opponent").value;
    const lines = [`${opponent}: ${ratingOf(opponent)}`];
    if (seatsOf($("#f-table").value) === 4) {
      const partner = $("#f-partner").value;
      lines.push(`${partner}: ${ratingOf(partner)}`);
    }
    const anchors = ["random", "heuristic"].filter((n) => (options.ratings || {})[n])
      .map((n) => `${n} ${options.ratings[n].rating}`).join(", ");
    clear(note, lines.join("; "), anchors ? ` (2p ratings; ${anchors})` : "");
  }

  function collectForm() {
    const table = $("#f-table").value;
    const body = {
      table,
      opponent: $("#f-opponent").value,
      seat: parseInt($("#f-seat").value, 10),
      endgame: $("#f-endgame").checked,
      rules: {},
    };
    if (seatsOf(table) === 4) body.partner = $("#f-partner").value;
    const seed = $("#f-seed").value.trim();
    if (seed !== "") body.seed = Number(seed);
    for (const field of options.rules) {
      const input = document.getElementById(`r-${field.name}`);
      if (field.type === "bool") body.rules[field.name] = input.checked;
      else if (field.type === "choice") body.rules[field.name] = input.value;
      else {
        const text = input.value.trim();
        if (text === "") {
          if (field.nullable) body.rules[field.name] = null;
          continue; // not nullable: the server's default
        }
        body.rules[field.name] = Number(text);
      }
    }
    return body;
  }

  form.addEventListener("submit", (event) => {
    event.preventDefault();
    newGame();
  });

  // ------------------------------------------------------------------------------ play
  const coach = { on: false, key: "", hint: null }; // the Hint toggle and the latest hint
  const game = {
    state: null,
    busy: false,
    seenResults: 0,
    log: new Map(), // move -> play, merged from every state's history
    lastMine: -1, // the move number of the human's latest play
    choosing: null, // the card whose capture options are shown
  };

  function sideLabel(state, side) {
    if (state.rules.teams) return side === state.side ? "You + partner" : "Opponents";
    const player = state.players.find((p) => p.side === side);
    if (!player) return `side ${side}`;
    return player.you ? "You" : player.name;
  }

  function sideMembers(state, side) {
    return state.players.filter((p) => p.side === side).map((p) => p.name).join(" + ");
  }

  function seatLabel(state, seat) {
    const player = state.players[seat];
    if (player.you) return "You";
    if (state.rules.teams) {
      const role = player.side === state.side ? "partner" : "opponent";
      return `${player.name} (${role})`;
    }
    return player.name;
  }

  function winnerText(state) {
    if (state.draw) return "It's a draw";
    if (state.winner === null || state.winner === undefined) return "";
    if (state.rules.teams) {
      return state.winner === state.side ? "You and your partner win!" : "The opponents win";
    }
    return state.winner === state.side ? "You win!" : `${sideLabel(state, state.winner)} wins`;
  }

  async function newGame() {
    if (!options) return;
    hideMessage();
    const body = collectForm();
    game.busy = true;
    $("#new-game").disabled = true;
    renderGame();
    try {
      const state = await api("/api/games", { method: "POST", body });
      game.log = new Map();
      game.seenResults = 0;
      game.lastMine = -1;
      game.choosing = null;
      closeModal();
      game.busy = false;
      applyState(state);
    } catch (error) {
      game.busy = false;
      showError(error);
      renderGame();
    } finally {
      $("#new-game").disabled = false;
    }
  }

  function applyState(state) {
    game.state = state;
    document.body.dataset.game = "1"; // narrow screens: the table first, the form below it
    for (const play of state.history || []) game.log.set(play.move, play);
    if (state.last_play) game.log.set(state.last_play.move, state.last_play);
    const results = state.round_results || [];
    if (results.length > game.seenResults) {
      game.seenResults = results.length;
      openRoundModal(state, results.length - 1);
    }
    renderGame();
    fetchHint();
  }

  async function fetchHint() {
    // the coach's view of the human's moves, asked for on the human's turn while Hint is on
    const state = game.state;
    if (!coach.on || !state || !state.your_turn || state.done || !state.coach) return;
    const key = `${state.game_id}:${state.move}`;
    if (coach.key === key && coach.hint) return;
    coach.key = key;
    coach.hint = null;
    try {
      const hint = await api(`/api/games/${encodeURIComponent(state.game_id)}/hint`);
      if (coach.key !== key) return; // the game moved on meanwhile
      coach.hint = hint;
      renderGame();
    } catch (error) {
      if (error.status !== 409) showError(error);
    }
  }

  function hintFor(state) {
    // {action: move} of the hint for this position, or null
    if (!coach.on || !coach.hint || coach.key !== `${state.game_id}:${state.move}`) return null;
    const moves = {};
    for (const move of coach.hint.moves) moves[move.action] = move;
    return moves;
  }

  function percent(p) {
    return `${Math.round(100 * p)}%`;
  }

  function hintToggle(state) {
    const box = h("input", { type: "checkbox", "data-testid": "hint-toggle", checked: coach.on });
    box.addEventListener("change", () => {
      coach.on = box.checked;
      renderGame();
      fetchHint();
    });
    return h("label", { class: "hint-toggle", title: state.coach
      ? `${state.coach}'s view of your moves, from your own cards only`
      : "no coach for this table" }, box, " Hint");
  }

  async function playAction(action) {
    const state = game.state;
    if (!state || game.busy || !state.your_turn) return;
    game.busy = true;
    game.choosing = null;
    game.lastMine = state.move;
    hideMessage();
    renderGame();
    try {
      const next = await api(`/api/games/${encodeURIComponent(state.game_id)}/actions`, {
        method: "POST", body: { action, move: state.move },
      });
      if (game.state.game_id !== state.game_id) return; // a new game started meanwhile
      game.busy = false;
      applyState(next);
    } catch (error) {
      if (game.state.game_id !== state.game_id) return;
      game.busy = false;
      showError(error);
      if (error.status === 409) refreshGame();
      else renderGame();
    }
  }

  async function refreshGame() {
    if (!game.state) return;
    try {
      applyState(await api(`/api/games/${encodeURIComponent(game.state.game_id)}`));
    } catch (error) {
      showError(error);
      renderGame();
    }
  }

  function clickCard(card) {
    const state = game.state;
    if (!state || game.busy || !state.your_turn) return;
    const choices = state.legal.filter((option) => option.card === card);
    if (choices.length === 0) return;
    if (choices.length === 1) {
      playAction(choices[0].action);
      return;
    }
    game.choosing = game.choosing === card ? null : card;
    renderGame();
  }

  function highlightBoard(root, takes) {
    for (const node of root.querySelectorAll(".board .card")) {
      node.classList.toggle("target", takes.includes(node.dataset.card));
    }
  }

  /** Where each seat sits on the felt, seen from ``bottom``'s chair (play passes to the left). */
  function positions(n, bottom) {
    const places = n === 2 ? ["bottom", "top"] : n === 3 ? ["bottom", "left", "right"]
      : ["bottom", "left", "top", "right"];
    const out = {};
    for (let k = 0; k < n; k += 1) out[(bottom + k) % n] = places[k];
    return out;
  }

  function facedownHand(count, size) {
    const fan = h("div", { class: "fan", "data-testid": "opponent-hand", "data-count": count });
    for (let i = 0; i < count; i += 1) fan.append(cardBack(size));
    if (count === 0) fan.append(h("span", { class: "fan-empty" }, "no cards"));
    else {
      fan.append(h("span", { class: "fan-count", "data-testid": "hand-count",
        title: `${count} card${count > 1 ? "s" : ""} in hand` }, count));
    }
    return fan;
  }

  function seatPlate(label, opts) {
    return h("div", { class: "plate" },
      h("span", { class: "plate-name", "data-testid": "seat-name" }, label),
      opts.dealer ? h("span", { class: "tag dealer", title: "dealer" }, "D") : null,
      opts.team ? h("span", { class: `tag team team-${opts.team}` }, opts.teamLabel) : null,
      h("span", { class: "plate-stats" },
        opts.captured === null ? null : h("span", { "data-testid": "seat-captured",
          "data-count": opts.captured, title: "cards captured" }, `${opts.captured} taken`),
        opts.bastras ? h("span", { class: "stars", "data-testid": "seat-bastras",
          title: "bastras" }, `\u2605${opts.bastras}`) : null));
  }

  function lastPlayLine(play, nameOf) {
    if (!play) return h("p", { class: "muted" }, "\u2014");
    return h("div", { class: "play-line" },
      h("b", {}, nameOf(play.seat)), " played ", chip(play.card),
      play.takes.length ? [" and took ", chips(play.takes)] : " onto the board",
      " ", bastraBadge(play.bastra));
  }

  function renderGame() {
    const felt = $("#felt");
    const state = game.state;
    felt.dataset.busy = game.busy ? "1" : "0";
    if (!state) return;
    const n = state.players.length;
    felt.dataset.gameId = state.game_id;
    felt.dataset.move = state.move;
    felt.dataset.yourTurn = state.your_turn ? "1" : "0";
    felt.dataset.done = state.done ? "1" : "0";
    const where = positions(n, state.seat);
    const grid = h("div", { class: `felt-grid n${n}` });

    for (let s = 0; s < n; s += 1) {
      if (s === state.seat) continue;
      const player = state.players[s];
      const team = state.rules.teams ? (player.side === state.side ? "us" : "them") : null;
      grid.append(h("div", {
        class: `seat pos-${where[s]} ${state.current === s ? "to-move" : ""}`,
        "data-testid": "seat", "data-seat": s,
      },
      seatPlate(player.name, {
        dealer: state.dealer === s, captured: state.captured[s],
        bastras: state.bastras[s] + state.jack_bastras[s],
        team, teamLabel: team === "us" ? "partner" : "opponent",
      }),
      facedownHand(state.hand_sizes[s], "small")));
    }

    // the centre: deck, board, the last play, whose turn
    const board = h("div", { class: "board", "data-testid": "board" });
    for (const card of state.board) board.append(cardFace(card, { testid: "board-card" }));
    if (!state.board.length) board.append(h("span", { class: "board-empty" }, "the board is empty"));
    const deck = h("div", { class: "deck", "data-testid": "deck", "data-count": state.deck_left,
      title: "cards left in the deck" },
    state.deck_left ? cardBack("small") : h("div", { class: "card small slot" }),
    h("span", { class: "deck-count" }, `${state.deck_left} left`));
    const nameOf = (seat) => seatLabel(state, seat);
    let note;
    if (state.done) note = "Game over";
    else if (game.busy) note = "Thinking\u2026";
    else if (state.your_turn) note = "Your turn: play a card";
    else note = `${nameOf(state.current)} to play`;
    const centre = h("div", { class: "centre-area" },
      h("div", { class: "centre-top" },
        h("span", { class: "round-tag" }, `Round ${state.round}`),
        h("div", { class: "felt-last", "data-testid": "felt-last-play" },
          state.last_play ? lastPlayLine(state.last_play, nameOf) : null)),
      h("div", { class: "centre-mid" }, n === 2 ? deck : null, board),
      h("div", { class: `turn-note ${state.your_turn && !game.busy ? "mine" : ""}`,
        "data-testid": "turn-note" }, note));
    if (state.done) centre.append(winnerBanner(state));
    grid.append(centre);
    if (n !== 2) grid.append(h("div", { class: "pos-deck" }, deck));

    // the human's seat
    const hand = h("div", { class: "hand", "data-testid": "hand" });
    const canPlay = state.your_turn && !game.busy && !state.done;
    const hint = canPlay ? hintFor(state) : null;
    let best = null;
    if (hint) {
      for (const move of Object.values(hint)) if (!best || move.prob > best.prob) best = move;
    }
    for (const card of state.hand) {
      const choices = state.legal.filter((option) => option.card === card);
      const legal = canPlay && choices.length > 0;
      const node = cardFace(card, {
        tag: "button", testid: "hand-card",
        classes: [legal ? "legal" : "dimmed", game.choosing === card ? "choosing" : ""],
        title: legal ? describeChoices(choices) : cardTitle(card),
      });
      node.disabled = !legal;
      node.dataset.options = choices.length;
      if (legal && choices.length > 1) {
        node.append(h("span", { class: "ways" }, `${choices.length} ways`));
      } else if (legal && choices[0].bastra) {
        node.append(h("span", { class: "ways bastra" }, "bastra!"));
      }
      if (hint && legal) {
        const prob = choices.reduce((sum, option) => sum + ((hint[option.action] || {}).prob || 0), 0);
        const isBest = choices.some((option) => best && option.action === best.action);
        node.classList.toggle("hint-best", isBest);
        node.append(h("span", { class: "hint-mark", "data-testid": "hint-mark",
          "data-prob": prob.toFixed(4) }, percent(prob)));
      }
      node.addEventListener("click", () => clickCard(card));
      if (legal && choices.length === 1) {
        node.addEventListener("mouseenter", () => highlightBoard(felt, choices[0].takes));
        node.addEventListener("mouseleave", () => highlightBoard(felt, []));
      }
      hand.append(node);
    }
    if (!state.hand.length) hand.append(h("span", { class: "hand-empty" }, "no cards in hand"));
    const mine = h("div", {
      class: `seat pos-bottom me ${state.current === state.seat ? "to-move" : ""}`,
      "data-testid": "seat", "data-seat": state.seat,
    },
    h("div", { class: "me-bar" },
      seatPlate("You", {
        dealer: state.dealer === state.seat, captured: state.captured[state.seat],
        bastras: state.bastras[state.seat] + state.jack_bastras[state.seat],
      }),
      state.coach ? hintToggle(state) : null),
    hand);
    if (game.choosing && canPlay) mine.append(chooser(state, game.choosing, felt));
    grid.append(mine);
    clear(felt, grid);
    renderInfo(state);
  }

  function describeChoices(choices) {
    return choices.map((option) => {
      const what = option.takes.length ? `takes ${option.takes.map(cardLabel).join(" ")}`
        : "goes onto the board";
      return `${cardLabel(option.card)} ${what}${option.bastra ? " (bastra!)" : ""}`;
    }).join("\n");
  }

  function chooser(state, card, felt) {
    const box = h("div", { class: "chooser", "data-testid": "capture-chooser", role: "dialog",
      "aria-label": `what ${cardLabel(card)} takes` },
    h("div", { class: "chooser-title" }, "Play ", chip(card), ": take which?"));
    const hint = hintFor(state);
    for (const option of state.legal.filter((o) => o.card === card)) {
      const move = hint ? hint[option.action] : null;
      const button = h("button", {
        type: "button", class: "option", "data-testid": "capture-option",
        "data-action": option.action, "data-takes": option.takes.join(" "),
      },
      option.takes.length ? ["takes ", chips(option.takes)] : "onto the board",
      option.bastra ? [" ", bastraBadge("bastra")] : null,
      move ? h("span", { class: "hint-mark", "data-testid": "hint-mark",
        "data-prob": move.prob.toFixed(4),
        title: move.search === null ? "the coach's probability" : "probability; search value" },
      percent(move.prob), move.search === null ? null : ` \u00b7 ${move.search.toFixed(1)}`) : null);
      button.addEventListener("click", () => playAction(option.action));
      button.addEventListener("mouseenter", () => highlightBoard(felt, option.takes));
      button.addEventListener("focus", () => highlightBoard(felt, option.takes));
      button.addEventListener("mouseleave", () => highlightBoard(felt, []));
      box.append(button);
    }
    box.append(h("button", { type: "button", class: "link", "data-testid": "capture-cancel",
      onclick: () => { game.choosing = null; renderGame(); } }, "cancel"));
    return box;
  }

  function winnerBanner(state) {
    const scores = state.scores.map((score, side) => `${sideLabel(state, side)} ${score}`);
    return h("div", { class: "banner", "data-testid": "winner",
      "data-winner": state.winner === null ? "" : state.winner, "data-draw": state.draw ? "1" : "0" },
    h("div", { class: "banner-title" }, winnerText(state)),
    h("div", { class: "banner-scores" }, scores.join("  \u00b7  ")),
    h("div", { class: "banner-actions" },
      h("button", { type: "button", class: "primary", "data-testid": "watch-replay",
        onclick: watchReplay }, "Watch the replay"),
      h("button", { type: "button", "data-testid": "play-again", onclick: newGame },
        "New game")));
  }

  function renderInfo(state) {
    const scores = $("#scores");
    const best = Math.max(...state.scores);
    clear(scores, state.scores.map((score, side) => h("div", {
      class: `side-score ${side === state.side ? "mine" : ""} ${score === best && best > 0 ? "leading" : ""}`,
      "data-testid": "side-score", "data-side": side, "data-score": score,
    },
    h("span", { class: "side-name" }, sideLabel(state, side),
      state.rules.teams ? h("small", {}, sideMembers(state, side)) : null),
    h("span", { class: "score-value" }, score))));
    scores.append(h("p", { class: "muted small" }, `playing to ${state.rules.target_score}`,
      state.rules.max_rounds ? `, at most ${state.rules.max_rounds} round` +
        (state.rules.max_rounds > 1 ? "s" : "") : ""));
    const facts = [
      ["Round", state.round],
      ["Dealer", seatLabel(state, state.dealer)],
      ["Deck", `${state.deck_left} cards left`],
      ["Move", state.move],
      ["To play", state.done ? "\u2014" : seatLabel(state, state.current)],
    ];
    clear($("#game-facts"), facts.map(([key, value]) => [h("dt", {}, key),
      h("dd", { "data-testid": `fact-${key.toLowerCase().replace(/ /g, "-")}` }, value)]));
    const nameOf = (seat) => seatLabel(state, seat);
    clear($("#last-play"), lastPlayLine(state.last_play, nameOf));
    const log = $("#play-log");
    const plays = [...game.log.values()].sort((a, b) => b.move - a.move).slice(0, 40);
    clear(log, plays.map((play) => h("li", {
      class: `${play.seat === state.seat ? "mine" : ""} ${play.move > game.lastMine ? "fresh" : ""}`,
      "data-testid": "play-log-entry", "data-move": play.move,
    },
    h("span", { class: "log-move", title: `round ${play.round}, move ${play.move + 1}` },
      `${play.move + 1}.`),
    h("span", { class: "log-who" }, nameOf(play.seat)), " ", chip(play.card),
    play.takes.length ? [" \u2192 ", chips(play.takes)] : null, " ", bastraBadge(play.bastra))));
    const rounds = $("#round-list");
    clear(rounds, (state.round_results || []).map((result, index) => h("button", {
      type: "button", class: "link", "data-testid": "round-result-open",
      onclick: () => openRoundModal(state, index),
    }, `Round ${result.round}: ${result.total.join(" \u2013 ")}`)));
  }

  // ------------------------------------------------------------------------------ round results
  /** The breakdown of one round: one column per side. */
  function roundTable(result, labels) {
    const sides = labels.length;
    const rows = [
      ["cards", "Cards", result.cards],
      ["card_points", "Card points", result.card_points],
      ["most_cards", "Most cards", result.most_cards],
      ["bastras", "Bastras", result.bastras.map((count, side) => {
        const jacks = (result.jack_bastras || [])[side] || 0;
        return jacks ? `${count} + ${jacks} jack` : count;
      })],
      ["bastra_points", "Bastra points", result.bastra_points],
      ["total", "Round total", result.total],
      ["scores", "Score", result.scores],
    ];
    const table = h("table", { class: "breakdown", "data-testid": "round-breakdown" },
      h("thead", {}, h("tr", {}, h("th", {}, ""),
        labels.map((label) => h("th", { scope: "col" }, label)))));
    const body = h("tbody");
    for (const [key, title, values] of rows) {
      body.append(h("tr", { "data-row": key, class: key === "total" || key === "scores" ? "sum" : "" },
        h("th", { scope: "row" }, title),
        [...Array(sides).keys()].map((side) => h("td", { "data-side": side }, values[side]))));
    }
    table.append(body);
    return table;
  }

  function leftoverNote(result, labels) {
    if (!result.leftover) return null;
    const who = result.leftover_side === null ? "nobody (no capture this round)"
      : labels[result.leftover_side];
    return h("p", { class: "muted small" },
      `${result.leftover} card${result.leftover > 1 ? "s" : ""} left on the board went to ${who}.`);
  }

  const modal = $("#modal");

  function openRoundModal(state, index) {
    const result = state.round_results[index];
    const labels = state.scores.map((_, side) => sideLabel(state, side));
    const last = index === state.round_results.length - 1;
    $("#modal-title").textContent = `Round ${result.round} result`;
    clear($("#modal-body"), roundTable(result, labels), leftoverNote(result, labels),
      last && state.done ? h("p", { class: "modal-winner" }, `Game over: ${winnerText(state)}`)
        : null);
    modal.dataset.round = result.round;
    modal.hidden = false;
    $("#modal-close").focus();
  }

  function closeModal() {
    modal.hidden = true;
  }

  $("#modal-close").addEventListener("click", closeModal);
  modal.addEventListener("click", (event) => {
    if (event.target === modal) closeModal();
  });

  // ------------------------------------------------------------------------------ replay
  const replay = { record: null, positions: [], pos: 0, timer: null, source: "", listed: false };
  const BASE_DELAY = 900; // ms per position at 1x

  async function watchReplay() {
    if (!game.state) return;
    try {
      const record = await api(`/api/games/${encodeURIComponent(game.state.game_id)}/record`);
      loadRecord(record, "your last game");
      location.hash = "#replay";
    } catch (error) {
      showError(error);
    }
  }

  function checkRecord(record) {
    if (!record || typeof record !== "object" || record.format !== "bastra-record") {
      throw new Error('not a Bastra game record (no "bastra-record" format tag)');
    }
    if (record.version !== 1) {
      throw new Error(`record version ${record.version}: this page reads version 1`);
    }
    if (!Array.isArray(record.steps) || !Array.isArray(record.players) || !record.rules) {
      throw new Error("the record has no steps, players or rules");
    }
  }

  function loadRecord(record, source) {
    checkRecord(record);
    document.body.dataset.record = "1"; // narrow screens: the table first, the picker below
    replayStop();
    replay.record = record;
    replay.source = source;
    const afterMove = new Map((record.round_results || []).map((r) => [r.after_move, r]));
    replay.positions = [];
    record.steps.forEach((step, index) => {
      replay.positions.push({ kind: "step", index });
      if (afterMove.has(index)) {
        replay.positions.push({ kind: "result", index, result: afterMove.get(index) });
      }
    });
    replay.pos = 0;
    const scrub = $("#rp-scrub");
    scrub.max = Math.max(0, replay.positions.length - 1);
    scrub.value = 0;
    renderReplayInfo();
    renderReplay();
  }

  function recordSideLabel(record, side) {
    const members = record.players.filter((p) => p.side === side).map((p) => p.name);
    if (record.rules.teams) return `Team ${side === 0 ? "A" : "B"} (${members.join(" + ")})`;
    return members.join(" + ") || `side ${side}`;
  }

  function recordSeatLabel(record, seat) {
    const player = record.players[seat];
    return `${player.name} \u00b7 seat ${seat}`;
  }

  function renderReplayInfo() {
    const record = replay.record;
    const info = $("#replay-info");
    if (!record) return;
    const rules = record.rules;
    const final = record.final || {};
    const sides = (final.scores || []).map((_, side) => recordSideLabel(record, side));
    let outcome = "unfinished";
    if (final.done) {
      outcome = final.winner === null || final.winner === undefined ? "a draw"
        : `${sides[final.winner]} won`;
    }
    clear(info,
      h("h3", {}, replay.source),
      h("dl", { class: "facts" },
        h("dt", {}, "Table"), h("dd", {}, TABLE_LABELS[record.table] || record.table ||
          `${rules.num_players} players`),
        h("dt", {}, "Players"), h("dd", {}, record.players.map((p) => p.name).join(", ")),
        h("dt", {}, "Rules"), h("dd", {}, `to ${rules.target_score}` +
          (rules.max_rounds ? `, ${rules.max_rounds} round${rules.max_rounds > 1 ? "s" : ""} max`
            : "") + `, captures: ${rules.capture}`),
        h("dt", {}, "Moves"), h("dd", {}, record.steps.length),
        h("dt", {}, "Result"), h("dd", { "data-testid": "replay-outcome" },
          `${outcome}${final.scores ? ` (${final.scores.join(" \u2013 ")})` : ""}`)));
  }

  function bottomSeat(record) {
    const human = record.players.find((p) => p.name === "human");
    return human ? human.seat : 0;
  }

  function renderReplay() {
    const felt = $("#replay-felt");
    const record = replay.record;
    const counter = $("#rp-counter");
    const controls = $("#replay-controls");
    controls.classList.toggle("disabled", !record);
    if (!record) return;
    const total = record.steps.length;
    if (!replay.positions.length) {
      clear(felt, h("div", { class: "felt-empty" }, h("p", {}, "This record has no moves.")));
      counter.textContent = "0 / 0";
      return;
    }
    const position = replay.positions[replay.pos];
    const step = record.steps[position.index];
    const n = record.players.length;
    const before = step.before;
    const where = positions(n, bottomSeat(record));
    const isResult = position.kind === "result";
    const round = (record.rounds || []).find((r) => r.round === step.round);
    felt.dataset.pos = replay.pos;
    felt.dataset.kind = position.kind;
    felt.dataset.move = position.index;
    $("#rp-scrub").value = replay.pos;
    counter.textContent = isResult
      ? `Round ${step.round} over \u00b7 ${position.index + 1} / ${total}`
      : `Move ${position.index + 1} / ${total}`;
    counter.dataset.move = position.index + 1;

    const grid = h("div", { class: `felt-grid n${n} replay` });
    for (let s = 0; s < n; s += 1) {
      const player = record.players[s];
      let cards = before.hands[s] || [];
      if (isResult && s === step.seat) cards = cards.filter((c) => c !== step.card);
      const hand = h("div", { class: "hand open", "data-testid": "replay-hand", "data-seat": s });
      const size = where[s] === "left" || where[s] === "right" ? "small" : "";
      for (const card of cards) {
        const playing = !isResult && s === step.seat && card === step.card;
        hand.append(cardFace(card, { size, testid: "replay-card",
          classes: playing ? ["playing"] : [] }));
      }
      if (!cards.length) hand.append(h("span", { class: "hand-empty" }, "no cards"));
      grid.append(h("div", {
        class: `seat pos-${where[s]} ${!isResult && s === step.seat ? "to-move" : ""}`,
        "data-testid": "replay-seat", "data-seat": s,
      },
      seatPlate(recordSeatLabel(record, s), {
        dealer: round && round.dealer === s,
        captured: isResult ? null : before.captured[s],
        team: record.rules.teams ? (player.side === 0 ? "a" : "b") : null,
        teamLabel: player.side === 0 ? "team A" : "team B",
      }),
      hand));
    }

    const sideLabels = (record.final && record.final.scores ? record.final.scores : before.scores)
      .map((_, side) => recordSideLabel(record, side));
    let middle;
    if (isResult) {
      middle = h("div", { class: "result-card", "data-testid": "replay-round-result" },
        h("h3", {}, `Round ${position.result.round} result`),
        roundTable(position.result, sideLabels), leftoverNote(position.result, sideLabels),
        replay.pos === replay.positions.length - 1 && record.final && record.final.done
          ? h("p", { class: "modal-winner", "data-testid": "replay-winner" },
            record.final.winner === null ? "The game is a draw"
              : `${sideLabels[record.final.winner]} won the game`) : null);
    } else {
      const board = h("div", { class: "board", "data-testid": "replay-board" });
      for (const card of before.board) {
        board.append(cardFace(card, { testid: "replay-board-card",
          classes: step.takes.includes(card) ? ["taken"] : [] }));
      }
      if (!before.board.length) board.append(h("span", { class: "board-empty" }, "empty board"));
      const deck = h("div", { class: "deck", title: "cards left in the deck" },
        before.deck_left ? cardBack("small") : h("div", { class: "card small slot" }),
        h("span", { class: "deck-count" }, `${before.deck_left} left`));
      middle = h("div", { class: "centre-mid" }, n === 2 ? deck : null, board);
      if (n !== 2) grid.append(h("div", { class: "pos-deck" }, deck));
    }
    const caption = stepCaption(record, step, position);
    const copy = caption.cloneNode(true);
    copy.removeAttribute("data-testid");
    grid.append(h("div", { class: "centre-area" },
      h("div", { class: "centre-top" }, h("span", { class: "round-tag" }, `Round ${step.round}`),
        h("div", { class: "felt-last" }, copy)),
      middle));
    clear(felt, grid);

    clear($("#replay-step"), caption);
    renderPolicy(record, step, position);
    const scores = isResult ? position.result.scores : before.scores;
    clear($("#replay-scores"), scores.map((score, side) => h("div", {
      class: "side-score", "data-testid": "replay-side-score", "data-side": side,
    }, h("span", { class: "side-name" }, sideLabels[side]),
    h("span", { class: "score-value" }, score))));
    $("#rp-play").textContent = replay.timer ? "Pause" : "Play";
    $("#rp-play").dataset.playing = replay.timer ? "1" : "0";
  }

  function stepCaption(record, step, position) {
    if (position.kind === "result") {
      return h("div", { class: "play-line" }, `Round ${step.round} is over: the breakdown.`);
    }
    return h("div", { class: "play-line", "data-testid": "replay-caption" },
      h("b", {}, recordSeatLabel(record, step.seat)), " plays ", chip(step.card),
      step.takes.length ? [" and takes ", chips(step.takes)] : " onto the board",
      " ", bastraBadge(step.bastra));
  }

  function renderPolicy(record, step, position) {
    const box = $("#replay-policy");
    if (position.kind !== "step") {
      clear(box);
      return;
    }
    const name = record.players[step.seat].name;
    if (!step.policy) {
      clear(box, h("p", { class: "muted small", "data-testid": "no-policy" },
        `${name} has no network to show for this move.`));
      return;
    }
    const value = Number(step.policy.value);
    const chart = h("div", { class: "policy", "data-testid": "policy" },
      h("div", { class: "policy-head" }, h("span", {}, `${name} thought`),
        h("span", { class: `value ${value >= 0 ? "pos" : "neg"}`, "data-testid": "policy-value",
          title: "the value head's estimate for the seat to move, in the reward's units" },
        `value ${value >= 0 ? "+" : ""}${value.toFixed(2)}`)));
    for (const option of step.policy.top || []) {
      const chosen = option.action === step.action;
      const pct = Math.max(0, Math.min(1, Number(option.prob))) * 100;
      chart.append(h("div", {
        class: `policy-bar ${chosen ? "chosen" : ""}`, "data-testid": "policy-bar",
        "data-action": option.action, "data-prob": option.prob,
      },
      h("span", { class: "policy-label" }, chip(option.card),
        option.takes.length ? [" takes ", chips(option.takes)] : " onto the board",
        chosen ? h("span", { class: "played", title: "the move played" }, " \u2713") : null),
      h("span", { class: "bar-track" }, h("span", { class: "bar-fill", style: `width:${pct}%` })),
      h("span", { class: "policy-prob" }, `${pct.toFixed(pct < 10 ? 1 : 0)}%`)));
    }
    clear(box, chart);
  }

  function replayGo(pos) {
    if (!replay.record || !replay.positions.length) return;
    replay.pos = Math.max(0, Math.min(replay.positions.length - 1, pos));
    if (replay.pos === replay.positions.length - 1) replayStop();
    renderReplay();
  }

  function replayDelay() {
    return BASE_DELAY / Number($("#rp-speed").value || 1);
  }

  function replayStop() {
    if (replay.timer) clearInterval(replay.timer);
    replay.timer = null;
    if (replay.record) {
      $("#rp-play").textContent = "Play";
      $("#rp-play").dataset.playing = "0";
    }
  }

  function replayStart() {
    if (!replay.record || !replay.positions.length) return;
    replayStop();
    if (replay.pos >= replay.positions.length - 1) replay.pos = 0;
    replay.timer = setInterval(() => replayGo(replay.pos + 1), replayDelay());
    renderReplay();
  }

  function replayToggle() {
    if (replay.timer) {
      replayStop();
      renderReplay();
    } else replayStart();
  }

  $("#rp-start").addEventListener("click", () => replayGo(0));
  $("#rp-back").addEventListener("click", () => replayGo(replay.pos - 1));
  $("#rp-forward").addEventListener("click", () => replayGo(replay.pos + 1));
  $("#rp-end").addEventListener("click", () => replayGo(replay.positions.length - 1));
  $("#rp-play").addEventListener("click", replayToggle);
  $("#rp-scrub").addEventListener("input", (event) => replayGo(Number(event.target.value)));
  $("#rp-speed").addEventListener("change", () => {
    if (replay.timer) replayStart();
  });

  document.addEventListener("keydown", (event) => {
    if (event.key === "Escape") {
      if (!modal.hidden) closeModal();
      else if (game.choosing) {
        game.choosing = null;
        renderGame();
      }
      return;
    }
    if (document.body.dataset.view !== "replay" || !replay.record) return;
    const target = event.target;
    if (target.closest && target.closest("input, select, textarea")) return;
    const keys = {
      ArrowRight: () => replayGo(replay.pos + 1),
      ArrowLeft: () => replayGo(replay.pos - 1),
      Home: () => replayGo(0),
      End: () => replayGo(replay.positions.length - 1),
      " ": replayToggle,
    };
    if (keys[event.key] && !(event.key === " " && target.closest && target.closest("button"))) {
      event.preventDefault();
      keys[event.key]();
    }
  });

  async function loadReplayList() {
    if (replay.listed) return;
    replay.listed = true;
    const select = $("#replay-select");
    const note = $("#replay-server-note");
    const noServer = () => {
      select.disabled = true;
      $("#replay-open").disabled = true;
      clear(select, h("option", {}, "none"));
      note.textContent = "This server offers no replays (start it with --replays DIR). " +
        "You can still open a local record file.";
    };
    if (!options.replays) {
      noServer();
      return;
    }
    try {
      const data = await api("/api/replays");
      const names = data.replays || [];
      if (!names.length) {
        noServer();
        note.textContent = "The server's replay folder holds no records yet.";
        return;
      }
      select.disabled = false;
      $("#replay-open").disabled = false;
      fillSelect(select, names, {}, names[0]);
      note.textContent = `${names.length} record${names.length > 1 ? "s" : ""} on the server.`;
    } catch (error) {
      if (error.status === 404) noServer();
      else {
        replay.listed = false;
        showError(error);
      }
    }
  }

  $("#replay-open").addEventListener("click", async () => {
    const name = $("#replay-select").value;
    if (!name) return;
    hideMessage();
    try {
      loadRecord(await api(`/api/replays/${encodeURIComponent(name)}`), name);
    } catch (error) {
      showError(error);
    }
  });

  $("#replay-file").addEventListener("change", (event) => {
    const file = event.target.files && event.target.files[0];
    if (!file) return;
    hideMessage();
    const reader = new FileReader();
    reader.onload = () => {
      try {
        loadRecord(JSON.parse(String(reader.result)), file.name);
      } catch (error) {
        showMessage(`${file.name}: ${error.message}`);
      }
    };
    reader.onerror = () => showMessage(`${file.name}: the file can't be read`);
    reader.readAsText(file);
  });

  // ------------------------------------------------------------------------------ leaderboard
  let leaderboardLoaded = false;

  async function loadLeaderboard() {
    if (leaderboardLoaded) return;
    const page = $("#leaderboard");
    const none = () => clear(page, h("p", { class: "notice", "data-testid": "leaderboard-none" },
      "No leaderboard loaded: start the server with --leaderboard FILE"));
    if (!options.leaderboard) {
      none();
      leaderboardLoaded = true;
      return;
    }
    try {
      const data = await api("/api/leaderboard");
      leaderboardLoaded = true;
      clear(page, (data.leaderboards || []).map(renderBoard));
    } catch (error) {
      if (error.status === 404) {
        none();
        leaderboardLoaded = true;
      } else {
        clear(page, h("p", { class: "notice" }, "The leaderboard could not be loaded."));
        showError(error);
      }
    }
  }

  const pct = (x) => `${(100 * x).toFixed(0)}%`;

  function renderRated(board) {
    const rows = board.rows || [];
    const best = rows.length ? rows[0].rating : 0;
    const worst = rows.length ? rows[rows.length - 1].rating : 0;
    const span = best - worst || 1;
    const body = h("tbody", {}, rows.map((row, index) => h("tr", { "data-testid": "rated-row",
      "data-player": row.player, "data-rating": row.rating, class: row.member ? "muted" : "" },
    h("td", { class: "rank" }, index + 1),
    h("th", { scope: "row" }, row.player),
    h("td", { class: "rating" }, h("span", { class: "rating-bar",
      style: `width:${15 + 85 * (row.rating - worst) / span}%` }),
    h("span", { class: "rating-num" }, row.rating.toFixed(0))),
    h("td", {}, row.member ? "frozen"
      : `${row.low.toFixed(0)} \u2013 ${row.high.toFixed(0)}`),
    h("td", {}, row.member ? "ladder" : row.games))));
    return h("section", { class: "panel board-card", "data-testid": "rated-board",
      "data-name": board.name },
    h("h2", {}, board.name),
    h("p", { class: "muted" }, `${TABLE_LABELS[board.table] || board.table}, ladder ` +
      `${board.ladder}: whole games, variance-reduced duplicate deals (bastra rate)`),
    h("table", { class: "ratings", "data-testid": "rated" },
      h("thead", {}, h("tr", {}, h("th", {}, "#"), h("th", {}, "Player"), h("th", {}, "Elo"),
        h("th", {}, "95% interval"), h("th", {}, "Games"))), body),
    h("p", { class: "muted small" },
      "Ladder members keep the ratings they were fitted with; each rated policy is fitted " +
      "against them, so ratings made on different days compare."));
  }

  function renderBoard(board) {
    if (board.kind === "rated") return renderRated(board);
    const results = board.results || [];
    const ratings = board.ratings || {};
    const intervals = board.rating_intervals || null;
    const names = [...new Set([...Object.keys(ratings), ...results.flatMap((r) => [r.a, r.b])])];
    names.sort((x, y) => (ratings[y] ?? -Infinity) - (ratings[x] ?? -Infinity));
    const tally = Object.fromEntries(names.map((n) => [n, { w: 0, d: 0, l: 0, games: 0 }]));
    for (const r of results) {
      tally[r.a].w += r.wins; tally[r.a].d += r.draws; tally[r.a].l += r.losses;
      tally[r.b].w += r.losses; tally[r.b].d += r.draws; tally[r.b].l += r.wins;
      tally[r.a].games += r.games; tally[r.b].games += r.games;
    }
    const first = results[0];
    const about = first ? `${TABLE_LABELS[first.table] || first.table}, ` +
      `${first.mode === "round" ? "single rounds" : "whole games"}, ${first.games} per pairing`
      : "no matches";

    const ratingTable = h("table", { class: "ratings", "data-testid": "ratings" },
      h("thead", {}, h("tr", {}, h("th", {}, "#"), h("th", {}, "Player"), h("th", {}, "Rating"),
        intervals ? h("th", {}, "95% interval") : null, h("th", {}, "W \u2013 D \u2013 L"),
        h("th", {}, "Games"))));
    const best = names.length ? ratings[names[0]] : 0;
    const worst = names.length ? ratings[names[names.length - 1]] : 0;
    const body = h("tbody");
    names.forEach((name, index) => {
      const rating = ratings[name];
      const t = tally[name];
      const span = best - worst || 1;
      const width = rating === undefined ? 0 : 15 + 85 * (rating - worst) / span;
      const interval = intervals && intervals[name];
      body.append(h("tr", { "data-testid": "rating-row", "data-player": name,
        "data-rating": rating },
      h("td", { class: "rank" }, index + 1),
      h("th", { scope: "row" }, name),
      h("td", { class: "rating" }, h("span", { class: "rating-bar", style: `width:${width}%` }),
        h("span", { class: "rating-num" }, rating === undefined ? "\u2014" : rating.toFixed(0))),
      intervals ? h("td", { class: "muted" }, interval
        ? `${Number(interval[0]).toFixed(0)} \u2013 ${Number(interval[1]).toFixed(0)}` : "\u2014")
        : null,
      h("td", {}, `${t.w} \u2013 ${t.d} \u2013 ${t.l}`),
      h("td", {}, t.games)));
    });
    ratingTable.append(body);

    const cell = (row, col) => {
      if (row === col) return h("td", { class: "diag" }, "\u2014");
      let r = results.find((x) => x.a === row && x.b === col);
      let flip = false;
      if (!r) {
        r = results.find((x) => x.a === col && x.b === row);
        flip = true;
      }
      if (!r) return h("td", { class: "muted" }, "");
      const rate = flip ? 1 - r.win_rate : r.win_rate;
      const low = flip ? 1 - r.ci_high : r.ci_low;
      const high = flip ? 1 - r.ci_low : r.ci_high;
      const wins = flip ? r.losses : r.wins;
      const losses = flip ? r.wins : r.losses;
      const diff = flip ? -r.point_diff : r.point_diff;
      const title = `${row} vs ${col}: ${(100 * rate).toFixed(1)}% ` +
        `(95% CI ${(100 * low).toFixed(1)}\u2013${(100 * high).toFixed(1)}%), ` +
        `${r.games} games: ${wins}W ${r.draws}D ${losses}L, ` +
        `mean point difference ${diff >= 0 ? "+" : ""}${Number(diff).toFixed(2)}`;
      return h("td", { class: "h2h-cell", "data-testid": "h2h-cell", "data-row": row,
        "data-col": col, "data-rate": rate, title,
        style: `background:hsl(${Math.round(rate * 120)},55%,${80 - 10 * Math.abs(rate - 0.5)}%)` },
      pct(rate), h("small", {}, `${pct(low)}\u2013${pct(high)}`));
    };
    const matrix = h("table", { class: "h2h", "data-testid": "h2h" },
      h("thead", {}, h("tr", {}, h("th", { class: "corner-cell" }, "row vs column"),
        names.map((name) => h("th", { scope: "col" }, name)))),
      h("tbody", {}, names.map((row) => h("tr", { "data-player": row },
        h("th", { scope: "row" }, row), names.map((col) => cell(row, col))))));

    return h("section", { class: "panel board-card", "data-testid": "leaderboard-board",
      "data-name": board.name },
    h("h2", {}, board.name), h("p", { class: "muted" }, about),
    h("div", { class: "board-columns" },
      h("div", {}, h("h3", {}, "Ratings"), ratingTable,
        h("p", { class: "muted small" },
          "Bradley\u2013Terry ratings on an Elo-like scale (mean 1500).")),
      h("div", { class: "h2h-wrap" }, h("h3", {}, "Head to head"), matrix,
        h("p", { class: "muted small" },
          "The row player's win rate against the column player (draws count half); " +
          "hover a cell for its 95% interval and record."))));
  }

  // ------------------------------------------------------------------------------ start
  async function start() {
    route();
    try {
      options = await api("/api/options");
    } catch (error) {
      showError(error);
      return;
    }
    buildForm();
    document.body.dataset.ready = "1";
    route();
  }

  start();
})();
