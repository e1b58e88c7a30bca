"""What only the server needs: authentication and access rules of the REST API
(``langgraph.json`` → ``auth``), the development sign-in of the console, the
served graphs and the store of ``langgraph.postgres.json``.
mnemo itself (the memory library) does not depend on this package."""
