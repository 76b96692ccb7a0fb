"""The run lifecycle's collaborators (issue 33): the parts of a run that :class:`lakemark.Job`
wires together — the lease and its heartbeat (:mod:`.lease`, :mod:`.heartbeat`), the
clean-up of processed files after the commit (:mod:`.cleanup`), the job's side of a
tracked-schema read (:mod:`.tracked_read`) and the time each stage took
(:mod:`.stage_timings`).

Each sees the run through the narrow :class:`.context.RunContext`, not the ``Job`` object,
returns what it made or found, and imports nothing from ``lakemark.job``.

This file re-exports nothing: import the module that holds what you need.
"""
