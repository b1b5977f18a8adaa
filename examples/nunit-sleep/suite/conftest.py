import time
import pytest


@pytest.fixture(autouse=True)
def settle():
    # Like NUnit 3.4's runner: a one-millisecond wait around every test.
    # It costs 1 ms with a fine timer, and a whole timer quantum with a coarse one.
    time.sleep(0.001)
    yield
