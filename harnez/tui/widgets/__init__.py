"""The TUI widgets: transcript blocks, prompt, title bar and status line."""
