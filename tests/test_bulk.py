"""`ccsim.bulk.without_gc`: the cyclic collector is paused inside and restored after."""

import gc

import ccsim
import pytest
from ccsim.bulk import without_gc
from ccsim.errors import ScenarioError


def test_the_collector_is_paused_inside_and_restored_after_a_return_or_a_raise():
    seen = []

    @without_gc
    def build(fail: bool) -> int:
        seen.append(gc.isenabled())
        if fail:
            raise ValueError("bad")
        return 7

    assert gc.isenabled()
    assert build(False) == 7
    with pytest.raises(ValueError):
        build(True)
    assert seen == [False, False]
    assert gc.isenabled()


def test_a_collector_paused_by_the_caller_stays_paused():
    gc.disable()
    try:
        without_gc(lambda: None)()
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_validation_runs_with_the_collector_paused_and_restores_it_when_it_fails(monkeypatch):
    from ccsim.scenario.schema import Scenario

    seen = []

    def build(data, file):
        seen.append(gc.isenabled())
        raise ScenarioError(file, "simulation.duration", "bad")

    monkeypatch.setattr(Scenario, "build", staticmethod(build))
    with pytest.raises(ScenarioError):
        ccsim.from_dict({"simulation": {"duration": "-1s"}})
    assert seen == [False]
    assert gc.isenabled()
