import streamlit as st

st.title("confusion")
st.info("This page is being built.")
