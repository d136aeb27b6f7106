//! Sessions in SQLite: what a live source records (`--record session.db`), what
//! `perfscope open session.db` replays and what `perfscope sql` queries.
