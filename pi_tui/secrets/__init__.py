"""Secrets never reach the model: values are replaced by placeholders in every request and put
back into the tool calls the model sends (see docs/secrets.md).

- :mod:`entries` reads ``secrets.yml``; :mod:`environment` finds secret-looking variables;
  :mod:`patterns` holds the built-in token shapes;
- :mod:`obfuscator` finds and replaces them (and reverses placeholders);
- :mod:`sources` gathers one obfuscator for a run; :mod:`active` is where requests and tool
  calls pass through it.
"""
