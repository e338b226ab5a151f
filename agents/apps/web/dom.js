/* The page's DOM helpers and its message bar. */

export const $ = (selector, root = document) => root.querySelector(selector);

export function h(tag, attrs, ...children) {
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

export function append(node, children) {
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

export function clear(node, ...children) {
  node.replaceChildren();
  return append(node, children);
}

export function fillSelect(select, values, labels = {}, selected = undefined) {
  clear(select, values.map((value) =>
    h("option", { value, selected: value === selected }, labels[value] || value)));
}

// ------------------------------------------------------------------------------ messages
const message = $("#message");

export function showMessage(text, kind = "error") {
  message.hidden = false;
  message.dataset.kind = kind;
  $(".message-text", message).textContent = text;
}

export function hideMessage() {
  message.hidden = true;
}

export function showError(error) {
  showMessage(error instanceof Error ? error.message : String(error));
}

$(".message-close", message).addEventListener("click", hideMessage);
