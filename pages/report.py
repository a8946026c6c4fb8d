import streamlit as st

st.title("report")
st.info("This page is being built.")
