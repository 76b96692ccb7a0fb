"""The run lifecycle's collaborators (issue 33): the parts of a run that :class:`lakemark.Job`
wires together — the lease and its heartbeat (:mod:`.lease`, :mod:`.heartbeat`) and the
clean-up of processed files after the commit (:mod:`.cleanup`).

Each sees the run through the narrow :class:`.context.RunContext`, not the ``Job`` object,
returns what it made or found, and imports nothing from ``lakemark.job``.

This file re-exports nothing: import the module that holds what you need.
"""
