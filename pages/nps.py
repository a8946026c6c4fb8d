import streamlit as st

st.title("nps")
st.info("This page is being built.")
