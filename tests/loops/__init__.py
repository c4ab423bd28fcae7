"""Tests of cogrsi_lib.loops."""
