"""Pure planners: given the previous state and what exists now, decide a run's exact input."""

from .files import (
    DEFAULT_MAX_BAND_MS,
    FileEntry,
    FileOptions,
    FilePlan,
    FileState,
    plan_everything,
    plan_files,
)

__all__ = [
    "DEFAULT_MAX_BAND_MS",
    "FileEntry",
    "FileOptions",
    "FilePlan",
    "FileState",
    "plan_everything",
    "plan_files",
]
