"""Pure planners: given the previous state and what exists now, decide a run's exact input."""

from .files import (
    DEFAULT_FULL_LISTING_EVERY,
    DEFAULT_MAX_BAND_MS,
    FileEntry,
    FileOptions,
    FilePlan,
    FileState,
    ListingOptions,
    candidate_paths,
    plan_everything,
    plan_files,
    resume_after,
)
from .modified import (
    DEFAULT_MODIFIED,
    MODIFIED_POLICIES,
    EarlierTake,
    check_modified_policy,
    leave_out,
)

__all__ = [
    "DEFAULT_FULL_LISTING_EVERY",
    "DEFAULT_MAX_BAND_MS",
    "FileEntry",
    "FileOptions",
    "FilePlan",
    "FileState",
    "ListingOptions",
    "DEFAULT_MODIFIED",
    "MODIFIED_POLICIES",
    "EarlierTake",
    "candidate_paths",
    "check_modified_policy",
    "leave_out",
    "plan_everything",
    "plan_files",
    "resume_after",
]
