"""Shared fixtures: one small audit sample and the scripted translators of hand-written rules."""

from __future__ import annotations

import pytest

from cogrsi_lib.audit import Auditor, AuditSample, build_translators, sample_audit_worlds
from cogrsi_lib.audit.audit import AuditConfig
from cogrsi_lib.audit.sandbox import SandboxLimits

N_WORLDS = 400
SEED = 7
SCRIPTED = [
    {"name": "A", "model": "scripted", "prompt": "literal", "seed": 0},
    {"name": "B", "model": "scripted", "prompt": "plain", "seed": 1},
]


@pytest.fixture(scope="session")
def sample() -> AuditSample:
    return sample_audit_worlds(N_WORLDS, SEED)


@pytest.fixture(scope="session")
def tiny_sample() -> AuditSample:
    return sample_audit_worlds(20, SEED)


@pytest.fixture(scope="session")
def fast_limits() -> SandboxLimits:
    return SandboxLimits(wall_s=20, cpu_s=2, memory_mb=512)


@pytest.fixture
def translators():
    return build_translators(SCRIPTED)


@pytest.fixture
def auditor(sample, translators) -> Auditor:
    return Auditor(sample, translators, AuditConfig())
