"""Kept for build scripts that import it by its old name; use cogrsi_lib.pipeline.write_notebook."""

from cogrsi_lib.pipeline import write_notebook

__all__ = ["write_notebook"]
