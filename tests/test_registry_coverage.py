"""The engine's registry is the only description of a model: every part of the front sees every
model through it, and no test or module lists models by hand. Adding a model to the engine
adds it to `ccsim list`, the docs, validation, SMC's random elements and compare's matrix."""

from __future__ import annotations

from typing import Any

import ccsim
import pytest
from ccsim.cli.listing import models_markdown
from ccsim.experiments import compare, smc
from ccsim.scenario import registry
from conftest import ROOT, run_cli

REGISTRY = registry.get_registry()
FAMILIES = ("queue", "cc", "transport", "app")
MODELS = [(family, model.name) for family in FAMILIES for model in REGISTRY.models(family)]


def test_the_listing_and_the_docs_show_every_model() -> None:
    listing = run_cli("list")
    assert listing.returncode == 0, listing.stderr
    markdown = (ROOT / "docs" / "models.md").read_text()
    assert markdown == models_markdown(), "docs/models.md is stale: ccsim list --markdown > docs/models.md"
    for _family, name in MODELS + [("node", "processing")]:
        assert f"{name}: " in listing.stdout, name
        assert f"### `{name}`" in markdown, name


def _required(model: registry.ModelInfo) -> dict[str, Any]:
    """A value for each required parameter: its lower bound (or 1), in canonical units; a flow
    reference names flow 0."""
    values: dict[str, Any] = {}
    for spec in model.params:
        if spec.default is None:
            values[spec.name] = 0 if spec.name in model.flow_refs else max(1, int(spec.min or 1))
    return REGISTRY.to_human(model.family, model.name, values)


def _scenario(family: str, name: str) -> dict[str, Any]:
    """Two flows on a dumbbell whose bottleneck, flow 1's congestion control, transport or
    application is the model (each other part at a plain default)."""
    model = REGISTRY.model(family, name)
    queue: dict[str, Any] = {"kind": "droptail"}
    flow: dict[str, Any] = {"pair": 1, "transport": "tcp", "cc": "newreno", "app": {"kind": "bulk"}}
    spec = {"kind": name, **_required(model)}
    if family == "queue":
        queue = spec
    elif family == "cc":
        flow["cc"] = spec
        if model.partner_queues:
            queue = {"kind": model.partner_queues[0]}
    elif family == "transport":
        flow["transport"] = spec
        if name != "tcp":
            del flow["cc"]
    else:
        flow["app"] = spec
    control = []
    if (family, name) == ("app", "ncs"):
        # A control loop's messages: the loop makes its own two flows with this application.
        flow = {"pair": 1, "app": {"kind": "bulk"}}
        control = [
            {
                "plant_host": "s1",
                "controller_host": "r1",
                "plant": {"num": [36.3], "den": [1, 36.17, 0]},
                "controller": {"kind": "pid"},
                "reference": {"kind": "constant"},
                "sampling_period": "14ms",
            }
        ]
    return {
        "control": control,
        "simulation": {"duration": "200ms"},
        "topology": {
            "kind": "dumbbell",
            "bottleneck": {"rate": "10Mbps", "delay": "1ms", "queue": queue},
            "access": {"rate": "100Mbps"},
            "pairs": [{"delay": "1ms"}, {"delay": "2ms"}],
        },
        "flows": [{"pair": 0, "app": {"kind": "bulk"}}, flow],
    }


@pytest.mark.parametrize(("family", "name"), MODELS)
def test_every_model_validates_runs_and_tells_smc_whether_it_is_random(family: str, name: str) -> None:
    scenario = ccsim.from_dict(_scenario(family, name))
    result = ccsim.run(scenario)
    assert (result.flows["app"] == name).any() if family == "app" else len(result.flows) == 2
    model = REGISTRY.model(family, name)
    elements = smc.random_elements(scenario)
    if family == "cc" and model.partner_queues:
        # The bottleneck is the partner queue, random or not itself (DualPI2 is).
        elements = [e for e in elements if not e.startswith(f"queue discipline {model.partner_queues[0]} ")]
    assert bool(elements) == (model.random["when"] == "always"), elements


def test_compare_varies_every_congestion_control_that_needs_no_queue_of_its_own() -> None:
    spec = compare.prepare(ROOT / "scenarios" / "papers" / "piotrowska" / "access_link.toml", seeds=2)
    for model in REGISTRY.models("cc"):
        # A congestion control with queues of its own runs when one of them is compared (Prague:
        # DualPI2, a default); reno differs from newreno only without SACK, which the flows use.
        compared = not model.partner_queues or set(model.partner_queues) & set(compare.DEFAULT_QUEUES)
        expected = bool(compared) and model.name != "reno"
        assert (model.name in spec.ccs) == expected, model.name
        if model.partner_queues and expected:
            assert spec.partners[model.name] == [q for q in compare.DEFAULT_QUEUES if q in model.partner_queues]


def test_no_module_keeps_a_copy_of_the_engines_facts() -> None:
    sources = "\n".join(p.read_text() for p in (ROOT / "python" / "ccsim").rglob("*.py"))
    for mirror in (
        "Keep in step",
        "RANDOM_QUEUES",
        "EXCLUDED_CCS",
        "FLOW_REFERENCES",
        "CONTROL_COLUMNS",
        "MAX_PLANT_ORDER",
    ):
        assert mirror not in sources, mirror
