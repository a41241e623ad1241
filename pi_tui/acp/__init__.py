"""``pi-tui acp``: pi-tui as an Agent Client Protocol agent, for editors (see docs/acp.md)."""
