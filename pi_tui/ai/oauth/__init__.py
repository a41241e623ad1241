"""Subscription logins (OAuth) as pi has them: the facts per provider, and using their tokens.

pi users log in with a subscription (``/login``: Claude Pro/Max, ChatGPT through Codex, GitHub
Copilot, ...) and pi keeps the result in ``auth.json`` as ``{"type": "oauth", "access",
"refresh", "expires", ...}``. :mod:`.providers` holds the endpoints, client ids, redirect URIs
and flows pi uses for each provider; :mod:`.refresh` turns a stored credential into what a
request needs, renewing it with the provider's token endpoint when it has expired and writing
it back in pi's shape so pi keeps working from the same file.
"""
