"""The reader settings a stage takes (``reader_config``, loops' ``reader``, the audit
replay's); the ``reader_eval`` stage's schema is in :mod:`cogrsi_lib.baselines.params`."""

from __future__ import annotations

from typing import Annotated

from pydantic import AfterValidator

from cogrsi_lib.reader.reader import ReaderConfig


def _stage_structured(config: ReaderConfig) -> ReaderConfig:
    if "structured" in config.model_fields_set:
        raise ValueError("set the stage's own 'structured', not the reader's")
    return config


#: :class:`ReaderConfig` overrides of a stage; ``structured`` is the stage's own setting
StageReader = Annotated[ReaderConfig, AfterValidator(_stage_structured)]
