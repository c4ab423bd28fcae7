"""cogrsi: build, evolve and audit reasoning strategies about other minds."""

__version__ = "0.1.0"
