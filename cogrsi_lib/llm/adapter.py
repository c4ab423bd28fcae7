"""A LoRA adapter folder (the ``train`` stage's ``reports/train/adapter``) as a backend loads
it: checked, its rank read, and named by a hash of its weights so that a backend's model name
and cache identity tell the trained model from the base."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

from cogrsi_lib.llm.weights import file_sha256

WEIGHTS = "adapter_model.safetensors"
CONFIG = "adapter_config.json"


@dataclass(frozen=True)
class LoraAdapter:
    path: Path
    sha256: str  # of the weights file
    rank: int

    @property
    def suffix(self) -> str:
        """What a backend appends to its model name: ``+lora:<first 12 hex of the hash>``."""
        return f"+lora:{self.sha256[:12]}"


def load_adapter(path: str | os.PathLike[str]) -> LoraAdapter:
    """The adapter in ``path``; raises ``FileNotFoundError`` when ``path`` is not a peft LoRA
    folder and ``ValueError`` when its config has no positive rank."""
    folder = Path(path)
    weights, config = folder / WEIGHTS, folder / CONFIG
    if not (weights.is_file() and config.is_file()):
        raise FileNotFoundError(
            f"{folder} is not a LoRA adapter folder ({CONFIG} and {WEIGHTS}); the train "
            "stage writes one to reports/train/adapter")
    rank = json.loads(config.read_text()).get("r")
    if not isinstance(rank, int) or rank < 1:
        raise ValueError(f"{config}: no positive LoRA rank 'r' (got {rank!r})")
    return LoraAdapter(folder, file_sha256(weights), rank)
