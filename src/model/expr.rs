//! The small C-like expression language of event attributes (`key=`, `top-by=`,
//! `printkey=`, `comm=`) and of user-space filters, evaluated over a trace event's fields.
