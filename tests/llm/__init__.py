"""Tests of cogrsi_lib.llm (backends, cache, accounting, parsing)."""
