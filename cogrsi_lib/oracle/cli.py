"""``cogrsi oracle ...``: answer questions about a world given as JSON."""

from __future__ import annotations

import json
from pathlib import Path

import typer

from cogrsi_lib.oracle.answer import answer_all
from cogrsi_lib.oracle.world import OracleInputError, World

app = typer.Typer(
    help="The access oracle: who saw, was told, or believes what.", no_args_is_help=True
)


@app.callback()
def _group() -> None:
    """The access oracle: who saw, was told, or believes what."""


@app.command("answer")
def answer_cmd(
    file: Path = typer.Argument(..., help="World JSON with 'questions' (use - for stdin)."),
    explain: bool = typer.Option(
        False, "--explain", help="Print each answer with its access facts."
    ),
) -> None:
    """Print one JSON list of answers, in question order (chain [] is reality)."""
    try:
        if str(file) == "-":
            world = World.from_json(typer.get_binary_stream("stdin").read())
        else:
            world = World.load(file)
        answers = answer_all(world)
    except OracleInputError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(code=2) from exc
    out = [a.to_dict() for a in answers] if explain else [a.value for a in answers]
    typer.echo(json.dumps(out))
