"""The run lifecycle's collaborators (issue 33): the parts of a run that :class:`lakemark.Job`
wires together — file sources: list, plan, record and read (:mod:`.file_sources`), the
replay of a failed attempt's input and fencing of skipped writes (:mod:`.replay`), sinks
(:mod:`.sinks`, :mod:`.jdbc_sink`), earlier takes and the check that each file was read as
planned (:mod:`.exact_read`), set-aside input files (:mod:`.quarantine`,
:mod:`.quarantine_ingest`, :mod:`.verify_reads`), the lease and its heartbeat (:mod:`.lease`,
:mod:`.heartbeat`), the clean-up of processed files after the commit (:mod:`.cleanup`), the
job's side of a tracked-schema read (:mod:`.tracked_read`) and the time each stage took
(:mod:`.stage_timings`).

Each sees the run through the narrow, frozen :class:`.context.RunContext` and, where it adds
to what the run accumulates, the :class:`.state.RunState` — never the ``Job`` object — and
imports nothing from ``lakemark.job``.

This file re-exports nothing: import the module that holds what you need.
"""
