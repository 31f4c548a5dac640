"""The TUI screens: session, resume picker and small dialogs."""
