"""File checkpoints: the project's files recorded per turn in a shadow git store
(:mod:`~pi_tui.checkpoints.store`), read through the session tree
(:mod:`~pi_tui.checkpoints.timeline`, :mod:`~pi_tui.checkpoints.history`), so moving in the tree
can bring the files of that point back. docs/checkpoints.md is the user's reference."""
