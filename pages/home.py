import streamlit as st

import cx_app

st.title("CX driver analytics")
st.write(f"Library version {cx_app.__version__}.")
