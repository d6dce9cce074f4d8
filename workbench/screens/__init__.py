"""The workbench pages: each is a small Streamlit script that calls the engine facade."""
