"""The Textual front end: screens and widgets that render the server's events; the only layer that imports textual."""
