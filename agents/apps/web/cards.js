/* Cards and the pieces of the felt that the live table and the replay both draw. */
import { h } from "./dom.js";

const SUITS = { C: "\u2663", D: "\u2666", H: "\u2665", S: "\u2660" };
const SUIT_NAMES = { C: "clubs", D: "diamonds", H: "hearts", S: "spades" };
const RANK_NAMES = { A: "ace", J: "jack", Q: "queen", K: "king" };
export const TABLE_LABELS = { "2p": "2 players", "4p_teams": "4 players, two teams" };

function parseCard(name) {
  const suit = name.slice(-1);
  let rank = name.slice(0, -1);
  if (rank === "T") rank = "10";
  return { rank, suit, red: suit === "D" || suit === "H" };
}

export function cardLabel(name) {
  const { rank, suit } = parseCard(name);
  return rank + SUITS[suit];
}

export function cardTitle(name) {
  const { rank, suit } = parseCard(name);
  return `${RANK_NAMES[rank] || rank} of ${SUIT_NAMES[suit]}`;
}

/** A card drawn face up; ``tag`` "button" for a card one can play. */
export function cardFace(name, opts = {}) {
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

export function cardBack(size) {
  return h("div", { class: `card back ${size || ""}`, "aria-hidden": "true" });
}

/** A card as a word in a sentence: "10♦" in its colour. */
export function chip(name) {
  return h("span", { class: `chip ${parseCard(name).red ? "red" : "black"}`, "data-card": name },
    cardLabel(name));
}

export function chips(names) {
  return names.map(chip);
}

export function bastraBadge(kind) {
  if (!kind) return null;
  return h("span", { class: "badge bastra", "data-testid": "bastra-badge" },
    kind === "jack" ? "jack bastra!" : "bastra!");
}

// ------------------------------------------------------------------------------ the felt
/** Where each seat sits on the felt, seen from ``bottom``'s chair (play passes to the left). */
export function positions(n, bottom) {
  const places = n === 2 ? ["bottom", "top"] : n === 3 ? ["bottom", "left", "right"]
    : ["bottom", "left", "top", "right"];
  const out = {};
  for (let k = 0; k < n; k += 1) out[(bottom + k) % n] = places[k];
  return out;
}

export function seatPlate(label, opts) {
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

/** The breakdown of one round: one column per side. */
export function roundTable(result, labels) {
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

export function leftoverNote(result, labels) {
  if (!result.leftover) return null;
  const who = result.leftover_side === null ? "nobody (no capture this round)"
    : labels[result.leftover_side];
  return h("p", { class: "muted small" },
    `${result.leftover} card${result.leftover > 1 ? "s" : ""} left on the board went to ${who}.`);
}
