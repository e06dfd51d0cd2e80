"""Hypothesis profiles: ``HYPOTHESIS_PROFILE=dev`` runs each property test on a tenth of its
examples (the fast loop in CONTRIBUTING); without it, Hypothesis's own default (or its ``ci``
profile on CI) and each test's own example count apply."""

from __future__ import annotations

from hypothesis import settings

DEV = "dev"
DEV_SHARE = 10  # percent of a test's examples the dev profile runs

settings.register_profile(DEV, max_examples=DEV_SHARE)


def examples(count: int) -> int:
    """``count`` under the default profile; scaled down with the loaded profile's ``max_examples``
    (a test's explicit count would otherwise override the profile)."""
    return max(1, count * settings.default.max_examples // 100)
