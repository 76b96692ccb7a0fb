"""Pure planners: given the previous state and what exists now, decide a run's exact input."""

from .files import (
    DEFAULT_FULL_LISTING_EVERY,
    DEFAULT_MAX_BAND_MS,
    FileEntry,
    FileOptions,
    FilePlan,
    FileState,
    ListingOptions,
    plan_everything,
    plan_files,
    resume_after,
)

__all__ = [
    "DEFAULT_FULL_LISTING_EVERY",
    "DEFAULT_MAX_BAND_MS",
    "FileEntry",
    "FileOptions",
    "FilePlan",
    "FileState",
    "ListingOptions",
    "plan_everything",
    "plan_files",
    "resume_after",
]
