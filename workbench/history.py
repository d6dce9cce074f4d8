"""One browser history entry per user action.

Streamlit's front end pushes a history entry for every change of the address: a page switch pushes the new
page's path, and then the page's inputs (written to the query string, see `urlstate`) push it again. Back
then needs several presses and Forward lands on a half-written address. This small `st.components.v2`
component (it runs in the app's own document) lets a push through only when the user did something since
the last one (a press, a key, a click posted by the graph); any further push of the same action replaces
the entry instead. Back and Forward themselves are untouched (Streamlit replaces entries while it follows
them).
"""

from __future__ import annotations

import streamlit as st

_JS = """
export default function () {
  if (window.hebbsHistoryGuard) { return; }
  window.hebbsHistoryGuard = true;
  let acted = false;
  const mark = () => { acted = true; };
  for (const name of ["pointerdown", "keydown"]) { document.addEventListener(name, mark, true); }
  window.addEventListener("message", (event) => {
    if (event.data && typeof event.data.type === "string" && event.data.type.startsWith("hebbs-")) { mark(); }
  });
  const push = window.history.pushState.bind(window.history);
  const replace = window.history.replaceState.bind(window.history);
  window.history.pushState = function (state, title, url) {
    if (acted) {
      acted = false;
      return push(state, title, url);
    }
    return replace(state, title, url);
  };
}
"""

_guard = st.components.v2.component("hebbs_history_guard", js=_JS)


def one_entry_per_action() -> None:
    """Mount the guard (once per page run; it patches the document once)."""
    _guard(key="history_guard", height=0)
