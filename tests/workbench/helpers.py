"""Helpers shared by the workbench's AppTest tests."""

from __future__ import annotations

import re

import pandas as pd
from streamlit.testing.v1 import AppTest

NO_PRESET = "none (the strategies above)"  # workbench/screens/recall_lab.py (a page script: not imported here)


def recall(at: AppTest, cue: str, strategies: list[str] | None = None, **widgets: object) -> AppTest:
    at.text_input(key="lab_cue").set_value(cue)
    if strategies is not None:  # named strategies: no preset (the lab starts from the default preset)
        at.selectbox(key="lab_preset").set_value(NO_PRESET).run()  # the strategies are enabled again
        at.multiselect(key="lab_strategies").set_value(strategies)
        at.run()
    for key, value in widgets.items():
        at.get_by_key(key).set_value(value)  # type: ignore[union-attr]
    return at.button(key="lab_run").click().run()


def table(at: AppTest, key: str) -> pd.DataFrame:
    """The table shown in the keyed container `key`."""
    return at.get_by_key(key).dataframe[0].value


def plain(markdown: str) -> str:
    """A markdown string as it reads on screen (backslash escapes removed)."""
    return re.sub(r"\\(.)", r"\1", markdown)
