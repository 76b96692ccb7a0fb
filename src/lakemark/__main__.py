"""``python -m lakemark`` is the ``lakemark`` command."""

from .cli import main

main()
