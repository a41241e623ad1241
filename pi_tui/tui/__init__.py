"""The Textual user interface: themes now, widgets and the app later."""
