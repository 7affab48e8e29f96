"""The packaged dense vectors (only where the optional `wordllama` wheel is installed)."""

from __future__ import annotations

import numpy as np
import pytest

from memory import dense
from memory.ranking import RANKINGS


def test_dense_ranking_is_offered_only_with_the_wheel():
    assert ("dense" in RANKINGS) == dense.available()
    if not dense.available():
        assert dense.embedder() is None


@pytest.mark.skipif(not dense.available(), reason="wordllama is not installed (optional)")
def test_the_packaged_model_loads_offline_and_bridges_a_category():
    embed = dense.embedder()
    assert embed is not None
    vectors = embed(["What is my pet called?", "Brought home our beagle puppy.", "Rent is due."])
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-3)
    assert vectors[0] @ vectors[1] > vectors[0] @ vectors[2]
