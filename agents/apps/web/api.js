/* The server's JSON API: one call, its errors, and what the server offers. */

export class ApiError extends Error {
  constructor(status, message) {
    super(message);
    this.status = status;
  }
}

export async function api(path, options = {}) {
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

/** What the server offers (``GET /api/options``), once the page has it. */
export const server = { options: null };
