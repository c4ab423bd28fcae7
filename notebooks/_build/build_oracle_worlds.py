"""Build notebooks/oracle_worlds.ipynb (outputs empty; run it with `cogrsi stage oracle_worlds`)."""

from pathlib import Path

from cogrsi_lib.pipeline import write_notebook

INTRO = """\
# Oracle worlds

Sample legal worlds from the access oracle (CogRSI §4.3, App. C J105) and answer every
question about them up to `max_depth`. Rules: `cogrsi_lib/oracle/SEMANTICS.md`."""

PARAMS = """\
# Small defaults for CI (nbval); `dvc repro` passes params.yaml[oracle_worlds].
n_worlds = 200
min_agents = 2
max_agents = 3
n_containers = 3
min_events = 4
max_events = 10
max_depth = 2
p_hidden_observer = 0.1  # chance a move or change is secretly watched from outside
p_missed = 0.1  # chance an onlooker misses a move or change unnoticed
testimony = "latest"  # or "fresher_access" (SEMANTICS.md, "Testimony")
opening = "common_ground"  # or "unknown" (SEMANTICS.md, "Opening")
seed = 0
out_dir = None"""

CODE = [
    """\
import time

from cogrsi_lib.oracle.sampler import SamplerConfig, question_table, sample_worlds, world_table
from cogrsi_lib.oracle.summary import event_summary, question_summary
from cogrsi_lib.pipeline import resolve_out_dir
from cogrsi_lib.reports import write_table""",
    """\
out = resolve_out_dir(out_dir, "oracle_worlds")
cfg = SamplerConfig(min_agents=min_agents, max_agents=max_agents, n_containers=n_containers,
                    min_events=min_events, max_events=max_events,
                    p_hidden_observer=p_hidden_observer, p_missed=p_missed,
                    testimony=testimony, opening=opening)
start = time.perf_counter()
worlds = list(sample_worlds(n_worlds, seed, cfg))
questions = question_table(worlds, max_depth)
seconds = time.perf_counter() - start
print(f"{len(worlds)} worlds, {questions.height} questions in {seconds:.2f} s")""",
    """\
worlds_df = world_table(worlds)
worlds_df.write_parquet(out / "worlds.parquet")
questions.write_parquet(out / "questions.parquet")
summary = question_summary(questions)
write_table(summary, out / "question_summary", title="Questions by kind and depth")
summary""",
    """\
events = event_summary(worlds_df)
write_table(events, out / "event_summary", title="Events in the sampled worlds")
events""",
    """\
conditions = worlds_df.group_by("lie_condition").len().sort("lie_condition")
write_table(conditions, out / "lie_conditions", title="Worlds per lie condition (plan §5.4)")
conditions""",
]


def build(path: Path) -> None:
    cells = [("markdown", INTRO), ("parameters", PARAMS), *(("code", c) for c in CODE)]
    write_notebook(path, cells)


if __name__ == "__main__":
    build(Path(__file__).resolve().parents[1] / "oracle_worlds.ipynb")
