"""Glue's transform classes (``from awsglue.transforms import *``), each a call of a
DynamicFrame method.

Every class is used as Glue scripts use it: ``ApplyMapping.apply(frame=..., mappings=...)`` or
``ApplyMapping()(frame=..., mappings=...)``, with Glue's keyword names. What each one does, and
where lakemark differs from Glue, is described on the DynamicFrame method it calls
(``lakemark.glue.dynamicframe``). The machine-learning transforms (FindMatches,
FindIncrementalMatches, FillMissingValues) exist so that importing them works; calling one
raises UnsupportedError.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ..errors import ConfigError, UnsupportedError
from .dynamicframe import DynamicFrame, DynamicFrameCollection

__all__ = [
    "GlueTransform",
    "ApplyMapping",
    "SelectFields",
    "DropFields",
    "RenameField",
    "Filter",
    "Map",
    "Join",
    "Relationalize",
    "ResolveChoice",
    "DropNullFields",
    "SplitFields",
    "SplitRows",
    "Unbox",
    "UnnestFrame",
    "Union",
    "Spigot",
    "SelectFromCollection",
    "MapToCollection",
    "FlatMap",
    "ErrorsAsDynamicFrame",
    "FindMatches",
    "FindIncrementalMatches",
    "FillMissingValues",
]


def _frame(frame: Any, what: str = "frame") -> DynamicFrame:
    if not isinstance(frame, DynamicFrame):
        raise ConfigError(f"{what} must be a DynamicFrame, got {type(frame).__name__}")
    return frame


def _collection(dfc: Any) -> DynamicFrameCollection:
    if not isinstance(dfc, DynamicFrameCollection):
        raise ConfigError(f"dfc must be a DynamicFrameCollection, got {type(dfc).__name__}")
    return dfc


class GlueTransform:
    """Base of the transforms: ``apply`` is a call on a new instance."""

    def __call__(self, *args: Any, **kwargs: Any) -> Any:  # pragma: no cover - overridden
        raise NotImplementedError

    @classmethod
    def apply(cls, *args: Any, **kwargs: Any) -> Any:
        return cls()(*args, **kwargs)

    @classmethod
    def name(cls) -> str:
        return cls.__name__


class ApplyMapping(GlueTransform):
    def __call__(self, frame: DynamicFrame, mappings: Sequence[Any], transformation_ctx: str = "",
                 info: str = "", stageThreshold: int = 0, totalThreshold: int = 0,
                 case_sensitive: bool = False) -> DynamicFrame:
        return _frame(frame).apply_mapping(mappings, case_sensitive=case_sensitive,
                                           transformation_ctx=transformation_ctx,
                                           stageThreshold=stageThreshold,
                                           totalThreshold=totalThreshold)


class SelectFields(GlueTransform):
    def __call__(self, frame: DynamicFrame, paths: Sequence[str], transformation_ctx: str = "",
                 info: str = "", stageThreshold: int = 0,
                 totalThreshold: int = 0) -> DynamicFrame:
        return _frame(frame).select_fields(paths, transformation_ctx=transformation_ctx,
                                           stageThreshold=stageThreshold,
                                           totalThreshold=totalThreshold)


class DropFields(GlueTransform):
    def __call__(self, frame: DynamicFrame, paths: Sequence[str], transformation_ctx: str = "",
                 info: str = "", stageThreshold: int = 0,
                 totalThreshold: int = 0) -> DynamicFrame:
        return _frame(frame).drop_fields(paths, transformation_ctx=transformation_ctx,
                                         stageThreshold=stageThreshold,
                                         totalThreshold=totalThreshold)


class RenameField(GlueTransform):
    def __call__(self, frame: DynamicFrame, old_name: str, new_name: str,
                 transformation_ctx: str = "", info: str = "", stageThreshold: int = 0,
                 totalThreshold: int = 0) -> DynamicFrame:
        return _frame(frame).rename_field(old_name, new_name,
                                          transformation_ctx=transformation_ctx,
                                          stageThreshold=stageThreshold,
                                          totalThreshold=totalThreshold)


class Filter(GlueTransform):
    def __call__(self, frame: DynamicFrame, f: Callable[[dict[str, Any]], Any],
                 transformation_ctx: str = "", info: str = "", stageThreshold: int = 0,
                 totalThreshold: int = 0) -> DynamicFrame:
        return _frame(frame).filter(f, transformation_ctx=transformation_ctx,
                                    stageThreshold=stageThreshold, totalThreshold=totalThreshold)


class Map(GlueTransform):
    def __call__(self, frame: DynamicFrame, f: Callable[[dict[str, Any]], Any],
                 transformation_ctx: str = "", info: str = "", stageThreshold: int = 0,
                 totalThreshold: int = 0) -> DynamicFrame:
        return _frame(frame).map(f, transformation_ctx=transformation_ctx,
                                 stageThreshold=stageThreshold, totalThreshold=totalThreshold)


class Join(GlueTransform):
    def __call__(self, frame1: DynamicFrame, frame2: DynamicFrame, keys1: Sequence[str] | str,
                 keys2: Sequence[str] | str, transformation_ctx: str = "") -> DynamicFrame:
        return _frame(frame1, "frame1").join(keys1, keys2, _frame(frame2, "frame2"),
                                             transformation_ctx=transformation_ctx)


class Relationalize(GlueTransform):
    def __call__(self, frame: DynamicFrame, staging_path: str | None = None,
                 name: str = "roottable", options: Mapping[str, Any] | None = None,
                 transformation_ctx: str = "", info: str = "", stageThreshold: int = 0,
                 totalThreshold: int = 0) -> DynamicFrameCollection:
        return _frame(frame).relationalize(name, staging_path, options,
                                           transformation_ctx=transformation_ctx)


class ResolveChoice(GlueTransform):
    def __call__(self, frame: DynamicFrame, specs: Sequence[Any] | None = None, choice: str = "",
                 database: str | None = None, table_name: str | None = None,
                 transformation_ctx: str = "", info: str = "", stageThreshold: int = 0,
                 totalThreshold: int = 0, catalog_id: str | None = None) -> DynamicFrame:
        return _frame(frame).resolveChoice(specs, choice, database, table_name,
                                           transformation_ctx=transformation_ctx,
                                           stageThreshold=stageThreshold,
                                           totalThreshold=totalThreshold, catalog_id=catalog_id)


class DropNullFields(GlueTransform):
    def __call__(self, frame: DynamicFrame, transformation_ctx: str = "", info: str = "",
                 stageThreshold: int = 0, totalThreshold: int = 0) -> DynamicFrame:
        return _frame(frame).drop_null_fields(transformation_ctx=transformation_ctx)


class SplitFields(GlueTransform):
    def __call__(self, frame: DynamicFrame, paths: Sequence[str], name1: str | None = None,
                 name2: str | None = None, transformation_ctx: str = "", info: str = "",
                 stageThreshold: int = 0, totalThreshold: int = 0) -> DynamicFrameCollection:
        return _frame(frame).split_fields(paths, name1 or "frame1", name2 or "frame2",
                                          transformation_ctx=transformation_ctx)


class SplitRows(GlueTransform):
    def __call__(self, frame: DynamicFrame, comparison_dict: Mapping[str, Any],
                 name1: str = "frame1", name2: str = "frame2", transformation_ctx: str = "",
                 info: str | None = None, stageThreshold: int = 0,
                 totalThreshold: int = 0) -> DynamicFrameCollection:
        return _frame(frame).split_rows(comparison_dict, name1, name2,
                                        transformation_ctx=transformation_ctx)


class Unbox(GlueTransform):
    def __call__(self, frame: DynamicFrame, path: str, format: str, transformation_ctx: str = "",
                 info: str = "", stageThreshold: int = 0, totalThreshold: int = 0,
                 **options: Any) -> DynamicFrame:
        return _frame(frame).unbox(path, format, transformation_ctx=transformation_ctx, **options)


class UnnestFrame(GlueTransform):
    def __call__(self, frame: DynamicFrame, transformation_ctx: str = "", info: str = "",
                 stageThreshold: int = 0, totalThreshold: int = 0) -> DynamicFrame:
        return _frame(frame).unnest(transformation_ctx=transformation_ctx)


class Union(GlueTransform):
    def __call__(self, frame1: DynamicFrame, frame2: DynamicFrame, transformation_ctx: str = "",
                 info: str = "", stageThreshold: int = 0,
                 totalThreshold: int = 0) -> DynamicFrame:
        return _frame(frame1, "frame1").union(_frame(frame2, "frame2"),
                                              transformation_ctx=transformation_ctx,
                                              stageThreshold=stageThreshold,
                                              totalThreshold=totalThreshold)


class Spigot(GlueTransform):
    def __call__(self, frame: DynamicFrame, path: str,
                 options: Mapping[str, Any] | None = None,
                 transformation_ctx: str = "") -> DynamicFrame:
        return _frame(frame).spigot(path, options, transformation_ctx=transformation_ctx)


class SelectFromCollection(GlueTransform):
    def __call__(self, dfc: DynamicFrameCollection, key: str,
                 transformation_ctx: str = "") -> DynamicFrame:
        return _collection(dfc).select(key, transformation_ctx)


class MapToCollection(GlueTransform):
    def __call__(self, dfc: DynamicFrameCollection,
                 callable: Callable[[DynamicFrame, str], DynamicFrame],
                 transformation_ctx: str = "") -> DynamicFrameCollection:
        return _collection(dfc).map(callable, transformation_ctx)


class FlatMap(GlueTransform):
    """Apply ``BaseTransform`` to every frame of ``dfc``, passing the frame as the keyword
    ``frame_name`` and ``base_kwargs`` as the other arguments; results stay a collection."""

    def __call__(self, dfc: DynamicFrameCollection, BaseTransform: Any, frame_name: str,
                 transformation_ctx: str = "", **base_kwargs: Any) -> DynamicFrameCollection:
        transform = BaseTransform.apply if hasattr(BaseTransform, "apply") else BaseTransform
        if not callable(transform):
            raise ConfigError(f"FlatMap BaseTransform must be a transform, got {BaseTransform!r}")
        if not frame_name or not isinstance(frame_name, str):
            raise ConfigError("FlatMap needs frame_name: the keyword the transform takes the "
                              "frame as (usually 'frame')")

        takes_ctx = _takes_transformation_ctx(BaseTransform)

        def run(frame: DynamicFrame, ctx: str) -> Any:
            kwargs = dict(base_kwargs)
            kwargs[frame_name] = frame
            if ctx and takes_ctx and "transformation_ctx" not in kwargs:
                kwargs["transformation_ctx"] = ctx
            return transform(**kwargs)

        return _collection(dfc).flatMap(run, transformation_ctx)


def _takes_transformation_ctx(transform: Any) -> bool:
    target = transform.__call__ if isinstance(transform, type) else transform
    try:
        params = inspect.signature(target).parameters.values()
    except (TypeError, ValueError):
        return False
    return any(p.name == "transformation_ctx" or p.kind is p.VAR_KEYWORD for p in params)


class ErrorsAsDynamicFrame(GlueTransform):
    def __call__(self, frame: DynamicFrame) -> DynamicFrame:
        return _frame(frame).errorsAsDynamicFrame()


class _Unsupported(GlueTransform):
    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        raise UnsupportedError(f"the Glue transform {type(self).__name__} is not supported by "
                               "lakemark")


class FindMatches(_Unsupported):
    """Glue ML transform: not supported (raises UnsupportedError)."""


class FindIncrementalMatches(_Unsupported):
    """Glue ML transform: not supported (raises UnsupportedError)."""


class FillMissingValues(_Unsupported):
    """Glue ML transform: not supported (raises UnsupportedError)."""
