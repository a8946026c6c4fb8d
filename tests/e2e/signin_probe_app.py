"""A tiny Streamlit app for the sign-in tests: signed out, only a "Sign in" button
(``st.login``); signed in, the user's e-mail and a "Sign out" button (``st.logout``).

Run by ``streamlit run`` (``__name__ == "__main__"``); importing it (pytest's doctest
collection) does nothing.
"""

from __future__ import annotations


def main() -> None:
    import streamlit as st

    st.title("cx-app sign-in probe")
    if not st.user.is_logged_in:
        st.button("Sign in", on_click=st.login)
        return
    st.markdown(f"Signed in as `{st.user.email}`")
    st.button("Sign out", on_click=st.logout)


if __name__ == "__main__":
    main()
