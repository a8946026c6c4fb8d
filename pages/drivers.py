import streamlit as st

st.title("drivers")
st.info("This page is being built.")
