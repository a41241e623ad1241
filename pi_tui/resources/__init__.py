"""Markdown resources users keep beside their code: skills and prompt templates."""
