"""A small chat page for people, served by the same `langgraph dev` server."""
