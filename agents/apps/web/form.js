/* The new-game form, built from what the server offers: tables, players, variant rules. */
import { server } from "./api.js";
import { TABLE_LABELS } from "./cards.js";
import { $, append, clear, fillSelect, h } from "./dom.js";

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

export const form = $("#new-game-form");
form.noValidate = true; // the server's own messages say what is wrong with a value

export function seatsOf(table) {
  const n = parseInt(table, 10);
  return Number.isFinite(n) && n > 0 ? n : 2;
}

export function buildForm() {
  const table = $("#f-table");
  fillSelect(table, server.options.tables, TABLE_LABELS, server.options.tables[0]);
  fillSelect($("#f-opponent"), server.options.opponents);
  fillSelect($("#f-partner"), server.options.opponents);
  table.addEventListener("change", tableChanged);
  $("#f-opponent").addEventListener("change", strengthNote);
  $("#f-partner").addEventListener("change", strengthNote);
  tableChanged();
  const box = $("#rule-fields");
  clear(box);
  for (const field of server.options.rules) {
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
  const fallback = server.options.opponents[0];
  const wanted = (server.options.default_opponent || {})[table];
  const opponent = server.options.opponents.includes(wanted) ? wanted : fallback;
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
  const found = (server.options.ratings || {})[name];
  if (!found) return "not rated";
  const strongest = Object.values(server.options.strongest || {}).includes(name)
    ? ", the strongest" : "";
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
  const anchors = ["random", "heuristic"].filter((n) => (server.options.ratings || {})[n])
    .map((n) => `${n} ${server.options.ratings[n].rating}`).join(", ");
  clear(note, lines.join("; "), anchors ? ` (2p ratings; ${anchors})` : "");
}

export function collectForm() {
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
  for (const field of server.options.rules) {
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
