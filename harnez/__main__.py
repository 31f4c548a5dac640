"""Allows `python -m harnez`."""

from harnez.cli import main

raise SystemExit(main())
