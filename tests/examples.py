"""Hypothesis profiles, chosen by ``HYPOTHESIS_PROFILE``: ``ci`` (``.ci/run`` sets it) runs every
property's full number of examples, as written in the test with :func:`examples`; ``quick``, the
default, a fifth of them (at least 5), for a local run. Both otherwise keep Hypothesis's own
settings (a test asks for ``deadline=None`` itself where its examples are slow)."""

import os

from hypothesis import settings

CI_EXAMPLES = 100  # Hypothesis's default max_examples
settings.register_profile("ci", max_examples=CI_EXAMPLES)
settings.register_profile("quick", max_examples=CI_EXAMPLES // 5)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "quick"))


def examples(ci: int) -> int:
    """A property's number of examples under the loaded profile: ``ci`` under CI's, a fifth of it
    (at least 5) under the quick one."""
    return max(min(ci, 5), ci * settings.default.max_examples // CI_EXAMPLES)
