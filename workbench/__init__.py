"""The hebbs workbench: a Streamlit app to explore and tune recall (`streamlit run workbench/app.py`).

Pages call the engine facade only; the helpers here turn engine results into tables, figures and graphs.
"""
