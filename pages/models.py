import streamlit as st

st.title("models")
st.info("This page is being built.")
