"""Tests of cogrsi_lib.reader and cogrsi_lib.baselines."""
