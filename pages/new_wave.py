import streamlit as st

st.title("new_wave")
st.info("This page is being built.")
