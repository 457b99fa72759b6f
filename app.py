"""eigenvision web demo: explore eigenspaces, recognise, detect, compare, group, evaluate.

Run with ``streamlit run app.py``. This file is the frame: the pages are ``app_pages/``, one
file each; what they share (the upload readers, the one cache of fitted models, the controls)
is ``app_pages/shared/``. Every number and figure comes from ``eigenvision``; the demo only
lays them out.
"""

from __future__ import annotations

import streamlit as st

import eigenvision as ev

st.set_page_config(page_title="eigenvision", page_icon=":material/face:", layout="wide")

#: The pages in the order the sidebar lists them; the first opens the app.
PAGES = [
    st.Page("app_pages/explore.py", title="Explore", icon=":material/scatter_plot:", default=True),
    st.Page("app_pages/recognise.py", title="Recognise", icon=":material/badge:"),
    st.Page("app_pages/detect.py", title="Detect", icon=":material/center_focus_strong:"),
    st.Page("app_pages/compare.py", title="Compare", icon=":material/compare:"),
    st.Page("app_pages/group.py", title="Group", icon=":material/groups:"),
    st.Page("app_pages/evaluate.py", title="Evaluate", icon=":material/monitoring:"),
]

page = st.navigation(PAGES)
st.sidebar.title("eigenvision")
try:  # what goes wrong is said in words with the fix, never as a traceback
    page.run()
except (ev.EigenvisionError, ValueError, TypeError) as exc:
    st.error(f"{exc}\n\nChange the settings in the sidebar or pick another dataset.")
except MemoryError:
    st.error("Not enough memory for this; use fewer or smaller images, or fewer components.")
