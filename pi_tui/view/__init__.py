"""What every front end draws, without a UI toolkit: the TUI, the HTML export and the server page.

Tree rows (:mod:`~pi_tui.view.tree_model`, :mod:`~pi_tui.view.tree_text`), footer and session
figures (:mod:`~pi_tui.view.stats`), theme loading and choice (:mod:`~pi_tui.view.theme`, with
:mod:`~pi_tui.view.colour_spaces` and :mod:`~pi_tui.view.terminal_colours`), the registry of
extension renderers (:mod:`~pi_tui.view.renderers`). JavaScript's number and string rules they
share with compaction live below both, in :mod:`pi_tui.js_semantics`. Nothing here imports
Textual or :mod:`pi_tui.tui`; this file imports nothing, so importing one view module stays cheap.
"""
