"""60 tests of different sizes: the work differs, the per-test wait does not."""
import pytest


def work(n):
    return sum(i * i % 7 for i in range(n))


@pytest.mark.parametrize("size", [200 * (1 + i % 12) for i in range(60)])
def test_work(size):
    assert work(size) >= 0
