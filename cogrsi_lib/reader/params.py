"""The reader settings a stage takes (``reader_config``, loops' ``reader``, the audit
replay's); the ``reader_eval`` stage's schema is in :mod:`cogrsi_lib.baselines.params`."""

from __future__ import annotations

from typing import Annotated

from pydantic import AfterValidator

from cogrsi_lib.reader.reader import ReaderConfig


def _stage_owned(config: ReaderConfig) -> ReaderConfig:
    if "structured" in config.model_fields_set:
        raise ValueError("set the stage's own 'structured', not the reader's")
    if "run" in config.model_fields_set:
        raise ValueError("the stage's 'runs' numbers the runs; the reader's 'run' is not set")
    return config


#: :class:`ReaderConfig` overrides of a stage; ``structured`` and ``run`` are the stage's
StageReader = Annotated[ReaderConfig, AfterValidator(_stage_owned)]
