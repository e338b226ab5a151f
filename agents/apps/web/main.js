/* Bastra in the browser: play the agents, watch replays, read a leaderboard.
   Plain JavaScript modules, no framework, no build step; they talk only to this server's
   JSON API. This one routes between the views and starts the page. */
import { api, server } from "./api.js";
import { $, showError } from "./dom.js";
import { buildForm } from "./form.js";
import { loadLeaderboard } from "./leaderboard.js";
import { loadReplayList, replayStop } from "./replay.js";
import "./table.js";

const VIEWS = ["play", "replay", "leaderboard"];

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
  if (!server.options) return;
  if (view === "replay") loadReplayList();
  if (view === "leaderboard") loadLeaderboard();
}

window.addEventListener("hashchange", route);

async function start() {
  route();
  try {
    server.options = await api("/api/options");
  } catch (error) {
    showError(error);
    return;
  }
  buildForm();
  document.body.dataset.ready = "1";
  route();
}

start();
