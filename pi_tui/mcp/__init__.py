"""MCP: tools and resources of Model Context Protocol servers, configured in pi 1.x's mcp.json.

``model`` holds the plain data (a server's configuration, problems); ``config`` reads and edits
the mcp.json files; ``connection`` keeps one server connected (the official ``mcp`` SDK over
stdio or streamable HTTP); ``manager`` runs every server on a thread of its own, so starting,
waiting for and calling servers never blocks a front end; ``tools`` turns server tools into
agent tools. Nothing here reads a project file unless the caller says the project is trusted.
"""
