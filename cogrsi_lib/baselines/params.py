"""The ``reader_eval`` stage's parameters (its schema; :mod:`cogrsi_lib.stage_params`): the
grounded reader and the baselines, named as the registry knows them
(:mod:`cogrsi_lib.baselines.registry`)."""

from __future__ import annotations

from pathlib import Path

from pydantic import NonNegativeInt, field_validator, model_validator

from cogrsi_lib.baselines.gold_perceivers import SYSTEMS as GOLD_SYSTEMS
from cogrsi_lib.baselines.learned import LEARNED, LearnedRun, learned_name, learned_runs
from cogrsi_lib.baselines.registry import check_systems
from cogrsi_lib.llm.spec import RealModel
from cogrsi_lib.matrix import MatrixParams
from cogrsi_lib.pairs.params import EvalPairs
from cogrsi_lib.reader.params import StageReader
from cogrsi_lib.reader.reader import ReaderConfig
from cogrsi_lib.settings import NonEmptyList, Settings


class GoldPerceiversParams(Settings):
    """CogRSI Table 27 (:mod:`cogrsi_lib.baselines.gold_perceivers`): each of ``systems``
    with its own perception call and with gold perceivers, on ``n_questions`` oracle
    questions (every first- and second-order belief about the narrative worlds of the
    oracle's evaluation split, in turn over Table 27's four columns) and on the first
    ``percept_tomi`` Percept-ToMi questions (not shipped: read where its files are, the stage
    stopping when they are absent; 0 reads none)."""

    n_questions: NonNegativeInt = 4
    percept_tomi: NonNegativeInt = 0
    systems: NonEmptyList[str] = list(GOLD_SYSTEMS)

    @field_validator("systems")
    @classmethod
    def _registered(cls, names: list[str]) -> list[str]:
        return check_systems(names)


class LearnedParams(Settings):
    """CogRSI-L rows (:mod:`cogrsi_lib.baselines.learned`): the reader with loop arm ``arm``'s
    final principle of each seed, the k-th seed's in run k, read from the loops stage's
    ``principles_file`` (a DVC dependency); an empty ``principles_file`` runs no such row.
    Each of ``compare_arms`` is read alike as its own system, ``cogrsi_l_<arm>`` (Figure 6
    and Table 9 set the accuracy-only loop's principle beside the gated one's)."""

    principles_file: str = ""
    arm: str = "gated_library"
    compare_arms: list[str] = []

    @field_validator("compare_arms")
    @classmethod
    def _other_arms(cls, value: list[str]) -> list[str]:
        if len(set(value)) != len(value):
            raise ValueError(f"an arm is named twice: {value}")
        return value

    def runs(self, root: Path) -> list[LearnedRun]:
        """The arm's runs (none without a file), the file read relative to ``root``."""
        return learned_runs(root / self.principles_file, self.arm) if self.principles_file else []

    def systems(self, root: Path) -> dict[str, list[LearnedRun]]:
        """Each learned system's runs: CogRSI-L (``arm``) first, then ``cogrsi_l_<arm>`` for
        each of ``compare_arms`` (none without a file)."""
        if not self.principles_file:
            return {}
        arms = [a for a in self.compare_arms if a != self.arm]
        return {LEARNED: self.runs(root)} | {
            learned_name(a): learned_runs(root / self.principles_file, a) for a in arms}


class ReaderEvalParams(MatrixParams):
    """``reader_eval``: the grounded reader and baselines on eval pairs and benchmark heads,
    for each model of ``models`` (or the one ``model``) and each of ``runs`` runs
    (:mod:`cogrsi_lib.matrix`)."""

    model: RealModel = {"backend": "fake", "reply": {"reasoning": "scripted", "answer": "A"}}
    systems: NonEmptyList[str] = ["zero_shot", "sc6", "perceptom", "cogrsi"]
    principle: str = "expert"
    reader_config: StageReader = ReaderConfig(sample_max_tokens=96, perception_max_tokens=160)
    structured: bool = True
    reference: str = "sc6"  # the system every other one is compared with (paired bootstrap)
    pairs: EvalPairs = EvalPairs()
    n_pairs: int = 3
    benchmarks: NonEmptyList[str] = ["tombench", "tomi"]
    n_per_benchmark: int = 2
    batch_size: int = 64
    # also ask the benchmark items zero-shot under each benchmark's official protocol (its
    # released prompt and rule; answer form enforced when ``structured``)
    official: bool = True
    official_max_tokens: int = 48
    gold_perceivers: GoldPerceiversParams = GoldPerceiversParams()
    learned: LearnedParams = LearnedParams()
    # Table 3 (cogrsi_lib/baselines/main_table.py): with the benchmarks stage's manifests,
    # the benchmark items are the first n_per_benchmark of the main test sample (S3) and the
    # first `confirmatory` of the confirmatory sample (S4); without, the first
    # n_per_benchmark of each benchmark
    manifest_dir: str = ""
    confirmatory: NonNegativeInt = 0
    # Tables 7, 12, 19: the first `development` questions of each benchmark's held-out sample 1
    # (S2, CogRSI's development set), answered by `development_systems` (needs manifest_dir)
    development: NonNegativeInt = 0
    development_systems: NonEmptyList[str] = ["cogrsi"]

    @model_validator(mode="after")
    def _samples_need_manifests(self) -> ReaderEvalParams:
        """The samples read from the benchmarks stage's manifests need ``manifest_dir``."""
        for field, sample in (("confirmatory", "the confirmatory sample (S4)"),
                              ("development", "held-out sample 1 (S2)")):
            if getattr(self, field) and not self.manifest_dir:
                raise ValueError(f"'{field}' reads {sample} from the benchmarks stage's "
                                 "manifests: give 'manifest_dir'")
        return self

    def bench_samples(self, root: Path) -> tuple[dict[str, list], dict[str, list], list[str]]:
        """The benchmark items of Table 3's blocks A and B (B empty without
        ``confirmatory``), and the benchmarks skipped for lack of data (only without
        ``manifest_dir``: a manifest's benchmark must be here)."""
        from cogrsi_lib.bench.manifest import CONFIRMATORY, MAIN_TEST, sample_items
        from cogrsi_lib.reader.evaluate import load_bench_heads

        if not self.manifest_dir:
            main, skipped = load_bench_heads(self.benchmarks, self.n_per_benchmark)
            return main, {}, skipped
        folder = root / self.manifest_dir
        main = sample_items(self.benchmarks, folder, MAIN_TEST, self.n_per_benchmark)
        confirm = (sample_items(self.benchmarks, folder, CONFIRMATORY, self.confirmatory)
                   if self.confirmatory else {})
        return main, confirm, []

    def development_samples(self, root: Path) -> dict[str, list]:
        """The benchmark items of the development block (Tables 7, 12 and 19): the first
        ``development`` of each benchmark's held-out sample 1 (none when 0)."""
        from cogrsi_lib.bench.manifest import DEVELOPMENT_SET, sample_items

        if not self.development:
            return {}
        return sample_items(self.benchmarks, root / self.manifest_dir, DEVELOPMENT_SET,
                            self.development)

    def reader(self, run: int = 0) -> ReaderConfig:
        """The reader's settings with the stage's ``structured``, for run ``run``."""
        return self.reader_config.model_copy(update={"structured": self.structured, "run": run})

    @field_validator("systems", "reference", "development_systems")
    @classmethod
    def _registered(cls, names: list[str] | str) -> list[str] | str:
        """Only registered reader systems, refused when the parameters load."""
        check_systems([names] if isinstance(names, str) else names)
        return names
