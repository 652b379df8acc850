"""The reference of the scenario file, generated from its models: a JSON Schema of the file as
it is written (``ccsim schema``, for editors and checkers) and the Markdown of
docs/scenario.md (``ccsim schema --markdown``).

Both come from the pydantic models of schema.py and topology.py (keys, descriptions, defaults,
bounds), the input forms of written.py (units) and the engine's registry (model names and
parameters), so that a key, a unit or a model added there appears here without an edit.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any, Final

from pydantic import BaseModel
from pydantic.fields import FieldInfo
from pydantic.json_schema import GenerateJsonSchema

from .fields import StrictModel
from .registry import FAMILY_TITLES, get_registry
from .schema import Scenario
from .written import (
    ALGO_DEFS,
    INNER_READER,
    MODELS_DOC,
    PROCESSING_DEF,
    REF_KEY,
    UNIT_FORMS,
    UnitForm,
    external_defs,
    models_anchor,
)

__all__ = ["json_schema", "json_text", "markdown", "EXAMPLES", "TITLES", "UNIT_EXAMPLES", "SCHEMA_FILE"]

JsonSchema = dict[str, Any]

DRAFT: Final = "https://json-schema.org/draft/2020-12/schema"
# The file name the docs use for the schema (`ccsim schema --output ccsim-scenario.schema.json`).
SCHEMA_FILE: Final = "ccsim-scenario.schema.json"

# The heading of each table of the file in docs/scenario.md, by model. A model missing here is
# an error when the reference is generated: a new table needs a heading.
TITLES: Final[dict[str, str]] = {
    "Scenario": "Top level",
    "Simulation": "`[simulation]`",
    "Dumbbell": '`[topology]` kind = "dumbbell"',
    "DaisyChain": '`[topology]` kind = "daisy_chain"',
    "Explicit": '`[topology]` kind = "explicit"',
    "Star": '`[topology]` kind = "star"',
    "Flow": "`[[flows]]`",
    "Metrics": "`[metrics]`",
    "Trace": "`[trace]`",
    "Control": "`[[control]]`",
    "Workload": "`[[workloads]]`",
    "Arrivals": "Arrivals of a workload (`arrivals`)",
    "LinkSpec": "Link specs",
    "Pair": "Dumbbell pairs",
    "ChainHost": "Daisy-chain hosts",
    "NodeDecl": "Nodes of an explicit topology",
    "ExplicitLink": "Links of an explicit topology",
    "Direction": "One direction of a link (`reverse`)",
    "LinkChange": "Changes of a link during the run (`schedule`)",
    "Plant": "The plant of a control loop (`plant`)",
}

# A short example of each table, by model or algorithm family: the file it is taken from and
# its text there, verbatim (tests/test_scenario_reference.py checks both). ``None``: written
# here, for a table no scenario of the repository uses.
EXAMPLES: Final[dict[str, tuple[str | None, str]]] = {
    "Scenario": (
        "scenarios/flagship.toml",
        'description = "10 Mbit/s dumbbell, DropTail of one BDP, 4 NewReno flows with RTTs 18-210 ms"',
    ),
    "Simulation": ("scenarios/flagship.toml", '[simulation]\nduration = "60s"\nwarmup = "10s"\nseed = 1'),
    "Dumbbell": (
        "scenarios/flagship.toml",
        '[topology]\nkind = "dumbbell"\n'
        'bottleneck = { rate = "10Mbps", delay = "5ms", queue = { kind = "droptail", limit = "81p" } }\n'
        'access = { rate = "100Mbps" }\n'
        'pairs = [ { delay = "2ms" }, { delay = "10ms" }, { delay = "25ms" }, { delay = "50ms" } ]',
    ),
    "DaisyChain": (
        "scenarios/examples/daisy_chain.toml",
        '[topology]\nkind = "daisy_chain"\n'
        'hops = [ { rate = "1.5Mbps", delay = "5ms", queue = { kind = "droptail", limit = "17p" } } ]\n'
        'access = { rate = "10Mbps" }\n'
        "hosts = [\n"
        '  { name = "sender", router = 0, delay = "2ms" },\n'
        '  { name = "receiver", router = 1, delay = "33ms" },\n'
        "]\n"
        'bottleneck_queue = "R0->R1"',
    ),
    "Explicit": (
        None,
        '[topology]\nkind = "explicit"\n'
        'nodes = [ { name = "h1", kind = "host" }, { name = "r", kind = "router" }, { name = "h2", kind = "host" } ]\n'
        "links = [\n"
        '  { a = "h1", b = "r", rate = "100Mbps", delay = "1ms" },\n'
        '  { a = "r", b = "h2", rate = "10Mbps", delay = "5ms", queue = { kind = "codel", target = "5ms" } },\n'
        "]\n"
        'bottleneck_queue = "r->h2"',
    ),
    "Star": (
        "scenarios/papers/dedu-ncs/star.toml",
        '[topology]\nkind = "star"\nsensors = 3\naccess = { rate = "1Mbps", delay = "1ms" }\n'
        'bottleneck = { rate = "256kbps", delay = "1ms", queue = { kind = "droptail", limit = "50p" } }',
    ),
    "Flow": (
        "scenarios/examples/web_transfers.toml",
        '[[flows]]\npair = 0\ncount = 20\ntransport = "tcp"\ncc = "newreno"\n'
        'app = { kind = "transfer", size = "50kB", distribution = "pareto", shape = 1.2 }\n'
        'start = "0s..5s"',
    ),
    "Metrics": ("scenarios/papers/ance/dumbbell.toml", "[metrics]\njain_flows = [0, 1, 2]"),
    "Trace": ("scenarios/flagship.toml", '[trace]\ninterval = "10ms"\nqueues = ["A->B"]\ncwnd = true'),
    "Control": (
        "scenarios/examples/ncs_dumbbell.toml",
        '[[control]]\nname = "motor"\nplant_host = "s3"\ncontroller_host = "r3"\n'
        "plant = { num = [36.3], den = [1, 36.17, 0] }\n"
        'controller = { kind = "pid", kp = 11.86, ki = 47.45 }\n'
        'reference = { kind = "square", low = 1.0, high = 2.0, period = "2s" }\n'
        'sampling_period = "14ms"\nmessage_size = "20B"',
    ),
    "Workload": (
        "scenarios/examples/websearch_fct.toml",
        '[[workloads]]\nname = "web"\npairs = "all"\narrivals = { process = "poisson", load = 0.6 }\n'
        'size = "websearch"\nstop = "25s"\ncc = "cubic"',
    ),
    "Arrivals": ("scenarios/examples/websearch_fct.toml", 'arrivals = { process = "poisson", load = 0.6 }'),
    "LinkSpec": (
        "scenarios/examples/asymmetric.toml",
        'bottleneck = { rate = "16Mbps", delay = "40ms", loss = 1e-4, queue = { kind = "droptail", limit = "50p" }, '
        'reverse = { rate = "80kbps", loss = 0 } }',
    ),
    "Pair": ("scenarios/examples/ncs_dumbbell.toml", '  { src_delay = "2ms", dst_delay = "2ms" },'),
    "ChainHost": ("scenarios/examples/daisy_chain.toml", '  { name = "sender", router = 0, delay = "2ms" },'),
    "NodeDecl": (None, '{ name = "r", kind = "router", processing = { delay = "20us" } }'),
    "ExplicitLink": (
        None,
        '{ a = "r", b = "h2", rate = "10Mbps", delay = "5ms", queue = { kind = "codel", target = "5ms" } }',
    ),
    "Direction": ("scenarios/examples/asymmetric.toml", 'reverse = { rate = "80kbps", loss = 0 }'),
    "LinkChange": (
        "scenarios/examples/link_failure.toml",
        'schedule = [ { at = "10s", up = false }, { at = "20s", up = true, rate = "5Mbps" } ]',
    ),
    "Plant": ("scenarios/examples/ncs_dumbbell.toml", "plant = { num = [36.3], den = [1, 36.17, 0] }"),
    "queue": ("scenarios/flagship.toml", 'queue = { kind = "droptail", limit = "81p" }'),
    "cc": ("scenarios/papers/ca-artt/asymmetric.toml", 'cc = { kind = "vegas", alpha = 1.0, beta = 3.0, gamma = 1.0 }'),
    "transport": (
        "scenarios/examples/daisy_chain.toml",
        'transport = { kind = "tcp", mss = "1000B", init_ssthresh = "30p", rwnd = "64p" }',
    ),
    "app": (
        "scenarios/examples/web_transfers.toml",
        'app = { kind = "transfer", size = "50kB", distribution = "pareto", shape = 1.2 }',
    ),
    "controller": ("scenarios/examples/ncs_dumbbell.toml", 'controller = { kind = "pid", kp = 11.86, ki = 47.45 }'),
    "reference": (
        "scenarios/examples/ncs_dumbbell.toml",
        'reference = { kind = "square", low = 1.0, high = 2.0, period = "2s" }',
    ),
    "node": (
        "scenarios/examples/web_transfers.toml",
        'router_processing = { delay = "20us", jitter = "50us", distribution = "uniform" }',
    ),
}


# --- the JSON Schema -------------------------------------------------------------------


class _InputSchema(GenerateJsonSchema):
    """pydantic's generator, for the form a file is written in: no null (TOML has none; an
    optional key is left out), no titles made from key names, defaults written with units,
    every key's description saying what it is, how it is written and its default."""

    def __init__(self, by_alias: bool = True, ref_template: str = "#/$defs/{model}") -> None:
        super().__init__(by_alias=by_alias, ref_template=ref_template)
        self.models: dict[str, type[BaseModel]] = {}

    def field_title_should_be_set(self, schema: Any) -> bool:
        return False

    def nullable_schema(self, schema: Any) -> JsonSchema:
        return self.generate_inner(schema["schema"])

    def default_schema(self, schema: Any) -> JsonSchema:
        # Defaults are written by model_schema, which knows each field's units.
        return self.generate_inner(schema["schema"])

    def function_before_schema(self, schema: Any) -> JsonSchema:
        # A model's own before-validator wraps its fields; any other reads a written form that
        # the Python type does not show, and must say it with `Written` (written.py).
        if INNER_READER.get():
            INNER_READER.set(False)  # Written's own reader; any further one is checked again
        elif schema["schema"]["type"] not in ("model-fields", "model"):
            function = schema["function"]["function"]
            raise TypeError(f"no written form for a value read by {function!r}: annotate its type with Written")
        return super().function_before_schema(schema)

    def model_schema(self, schema: Any) -> JsonSchema:
        json_schema = super().model_schema(schema)
        cls: type[BaseModel] = schema["cls"]
        if not issubclass(cls, StrictModel):
            # Not a table of the file (AlgoSpec: Written replaces it); pydantic drops it unused.
            return json_schema
        if cls.__name__ in self.models and self.models[cls.__name__] is not cls:
            raise TypeError(f"two scenario models are called {cls.__name__}")
        self.models[cls.__name__] = cls
        json_schema.pop("title", None)
        json_schema["description"] = _doc_text(cls.__doc__ or "")
        for name, field in cls.model_fields.items():
            prop = json_schema["properties"][name]
            default = written_default(cls, name)
            if default is not None:
                prop["default"] = default
            prop["description"] = _key_description(cls, name, field, prop, default)
        return json_schema


def _doc_text(doc: str) -> str:
    """A model's docstring as the description of its table: plain text, reStructuredText
    literals as Markdown's, without a paragraph on the Python API ("In Python, ...")."""
    paragraphs = [" ".join(line.strip() for line in block.splitlines()) for block in re.split(r"\n\s*\n", doc.strip())]
    kept = [p for p in paragraphs if p and not p.startswith("In Python,")]
    return "\n\n".join(kept).replace("``", "`")


def _drop_none(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _drop_none(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_drop_none(v) for v in value]
    return value


def written_default(cls: type[BaseModel], name: str) -> Any:
    """The default of key ``name`` of ``cls`` the way a file writes it (``"14ms"``, ``"tcp"``),
    or None when the key is required or absent by default."""
    field = cls.model_fields[name]
    if field.is_required():
        return None
    value = field.get_default(call_default_factory=True)
    if value is None:
        return None
    # The model's own serializer writes the value back with its units (fields.py).
    dumped = cls.model_construct(**{name: value}).model_dump(mode="json", include={name}, warnings=False)[name]
    written = _drop_none(dumped)
    return None if written == {} else written


def _unit_form(prop: JsonSchema) -> UnitForm | None:
    return next((form for form in UNIT_FORMS.values() if prop.get("title") == form.title), None)


def _key_description(cls: type[BaseModel], name: str, field: FieldInfo, prop: JsonSchema, default: Any) -> str:
    if not field.description:
        raise TypeError(f"{cls.__name__}.{name} has no description: give it Field(description=...)")
    parts = [field.description]
    form = _unit_form(prop)
    if form is not None:
        parts.append(form.help + ".")
    ref = prop.get(REF_KEY)
    if ref in ALGO_DEFS:
        family = ALGO_DEFS[ref]
        parts.append(f'A name, or a table {{ kind = "NAME", ... }}: `ccsim list {family}`.')
    if field.is_required():
        parts.append("Required.")
    elif default is not None:
        parts.append(f"Default: {toml_text(default)}.")
    return " ".join(parts)


def toml_text(value: Any) -> str:
    """A JSON value as TOML writes it inline."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, list):
        return "[" + ", ".join(toml_text(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{k} = {toml_text(v)}" for k, v in value.items()) + " }" if value else "{}"
    return repr(value)


def _walk(node: Any) -> Iterator[dict[str, Any]]:
    if isinstance(node, dict):
        yield node
        for value in node.values():
            yield from _walk(value)
    elif isinstance(node, list):
        for value in node:
            yield from _walk(value)


def _generate() -> tuple[JsonSchema, dict[str, type[BaseModel]]]:
    """The schema, and the model of each table by its definition's name."""
    generator = _InputSchema()
    schema = generator.generate(Scenario.__pydantic_core_schema__, mode="validation")
    defs: dict[str, JsonSchema] = schema.pop("$defs", {})
    needed: set[str] = set()
    for node in list(_walk(schema)) + list(_walk(defs)):
        if REF_KEY in node:
            name = node.pop(REF_KEY)
            node["$ref"] = f"#/$defs/{name}"
            needed.add(name)
    for name in sorted(needed):
        defs.update(external_defs(name))
    ordered: JsonSchema = {
        "$schema": DRAFT,
        "title": "ccsim scenario",
        "description": schema.pop("description")
        + " Reference: docs/scenario.md; models and their parameters: `ccsim list`, docs/models.md.",
    }
    ordered.update(schema)
    ordered["$defs"] = dict(sorted(defs.items()))
    return ordered, generator.models


def json_schema() -> JsonSchema:
    """The JSON Schema (draft 2020-12) of a scenario file as it is written: units as strings
    with their patterns, every key described, unknown keys refused, algorithm tables whose
    ``kind`` is a registered name and whose other keys are that model's parameters
    (``if``/``then`` on ``kind``, one definition per model)."""
    return _generate()[0]


def json_text() -> str:
    """:func:`json_schema` as the text ``ccsim schema`` prints."""
    return json.dumps(json_schema(), indent=2) + "\n"


# --- docs/scenario.md ------------------------------------------------------------------


def _slug(heading: str) -> str:
    """The anchor GitHub gives a Markdown heading."""
    return re.sub(r"[^\w\- ]", "", heading.lower()).replace(" ", "-")


def _family_heading(family: str) -> str:
    return f"{FAMILY_TITLES[family].capitalize()}s (`{family}`)"


def _ref_name(prop: JsonSchema) -> str | None:
    ref = prop.get("$ref")
    return ref.rsplit("/", 1)[1] if isinstance(ref, str) else None


def _plural(text: str) -> str:
    head, _, rest = text.partition(": ")
    head = head + "es" if head.endswith(("s", "x")) else head[:-1] + "ies" if head.endswith("y") else head + "s"
    return f"{head}: {rest}" if rest else head


def _type_text(prop: JsonSchema, models: dict[str, type[BaseModel]]) -> str:
    form = _unit_form(prop)
    if form is not None:
        return f"[{form.title}](#units)"
    ref = _ref_name(prop)
    if ref in ALGO_DEFS:
        family = ALGO_DEFS[ref]
        return f"[{FAMILY_TITLES[family]}](#{_slug(_family_heading(family))})"
    if ref == PROCESSING_DEF:
        return f"table: [node processing](#{_slug(_family_heading('node'))})"
    if ref in models:
        return f"table: [{_plain(TITLES[ref])}](#{_slug(TITLES[ref])})"
    if "anyOf" in prop:
        return " or ".join(_type_text(p, models) for p in prop["anyOf"])
    if "oneOf" in prop:
        return "table: " + ", ".join(_type_text(p, models).removeprefix("table: ") for p in prop["oneOf"])
    if "const" in prop or "enum" in prop:
        return "string"
    kind = prop.get("type")
    if kind == "array":
        return "list of " + _plural(_type_text(prop["items"], models))
    return {"integer": "integer", "number": "number", "string": "string", "boolean": "boolean"}.get(str(kind), "any")


def _plain(title: str) -> str:
    return title.replace("`", "").replace('"', "")


def _allowed_text(prop: JsonSchema) -> str:
    if _unit_form(prop) is not None:
        return ""  # the form is the type's (Units); bounds of quantities are validate's
    if "const" in prop:
        return f"`{toml_text(prop['const'])}`"
    if "enum" in prop:
        return ", ".join(f"`{toml_text(v)}`" for v in prop["enum"])
    ref = _ref_name(prop)
    if ref in ALGO_DEFS:
        return f"[registered names](#{_slug(_family_heading(ALGO_DEFS[ref]))})"
    if "anyOf" in prop:
        return "; ".join(text for p in prop["anyOf"] if (text := _allowed_text(p)))
    bounds = []
    lo, hi = prop.get("minimum"), prop.get("maximum")
    if lo is not None and hi is not None:
        bounds.append(f"{lo}..{hi}")
    elif lo is not None:
        bounds.append(f">= {lo}")
    elif hi is not None:
        bounds.append(f"<= {hi}")
    if prop.get("minItems"):
        bounds.append(f"at least {prop['minItems']} item{'s' if prop['minItems'] > 1 else ''}")
    if prop.get("minLength"):
        bounds.append("not empty")
    if prop.get("type") == "array" and not bounds:
        inner = _allowed_text(prop["items"])
        return f"each {inner}" if inner else ""
    return ", ".join(bounds)


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _model_order(schema: JsonSchema, models: dict[str, type[BaseModel]]) -> list[tuple[str, list[str]]]:
    """The tables of the file, breadth first from the top level, each with the key paths
    where it is written (``topology.bottleneck``, ``flows[i]``)."""
    defs = schema["$defs"]
    order: list[str] = ["Scenario"]
    paths: dict[str, list[str]] = {"Scenario": [""]}
    queue: list[tuple[JsonSchema, str]] = [(schema, "")]

    def visit(node: JsonSchema, path: str) -> None:
        ref = _ref_name(node)
        if ref in models:
            if ref not in paths:
                order.append(ref)
                paths[ref] = []
                queue.append((defs[ref], path))
            if path not in paths[ref]:
                paths[ref].append(path)
            return
        for key in ("anyOf", "oneOf"):
            for option in node.get(key, []):
                visit(option, path)
        if node.get("type") == "array" and isinstance(node.get("items"), dict):
            visit(node["items"], path + "[i]")

    while queue:
        model, path = queue.pop(0)
        for key, prop in model.get("properties", {}).items():
            visit(prop, f"{path}.{key}" if path else key)
    return [(name, paths[name]) for name in order]


def _example(key: str) -> list[str]:
    if key not in EXAMPLES:
        return []
    source, text = EXAMPLES[key]
    where = f", from `{source}`" if source else ""
    return [f"For example{where}:", "", "```toml", text, "```", ""]


# Values of each written form, as TOML writes them (tests/test_scenario_reference.py parses them).
UNIT_EXAMPLES: Final[dict[str, tuple[str, ...]]] = {
    "time": ('"60s"', '"5ms"', '"1.5s"', '"20us"', "0"),
    "rate": ('"10Mbps"', '"80kbps"', '"1Gbps"'),
    "bytes": ('"1500B"', '"50kB"', '"64KiB"', "1460"),
    "size": ('"100p"', '"81pkts"', '"120kB"', '"64KiB"'),
    "prob": ("1e-4", "0.01", '"1%"'),
    "window": ('"0s"', '"2s"', '"0s..1s"'),
}


def markdown() -> str:
    """docs/scenario.md: every table and key of a scenario file with its type, unit, default,
    allowed values and description, an example per table, and how to get editor completion."""
    schema, models = _generate()
    defs = schema["$defs"]
    missing = sorted(set(models) - set(TITLES))
    if missing:
        raise KeyError(f"no heading for the scenario tables {', '.join(missing)}: add them to TITLES in reference.py")
    lines = [
        "# Scenario files",
        "",
        "Generated by `ccsim schema --markdown` from the scenario models (`python/ccsim/scenario/`) and the",
        "engine's registry (a test keeps this file equal to its output). `ccsim schema` prints the same",
        "reference as a JSON Schema, for editors and checkers.",
        "",
        "A scenario is a TOML file: `[simulation]` (how long), `[topology]` (the network), `[[flows]]`",
        "(the traffic), and optionally `[trace]`, `[metrics]` and `[[control]]`. Quantities carry their",
        'units (`"10Mbps"`, `"5ms"`, `"1500B"`, `"100p"`), unknown keys are errors, and `ccsim validate',
        "FILE` checks a file without running it: its errors name the file, the key and what is allowed.",
        "Start from `scenarios/flagship.toml` or `scenarios/examples/`.",
        "",
        "## Editor completion and checking",
        "",
        "Write the JSON Schema of the file next to your scenarios:",
        "",
        "```sh",
        f".venv/bin/ccsim schema --output {SCHEMA_FILE}",
        "```",
        "",
        "[Taplo](https://taplo.tamasfe.dev/), the TOML language server of the VS Code extension",
        '"Even Better TOML" (also for other editors, and `taplo check` on the command line), then',
        "completes keys and model names, shows each key's description and marks mistakes as you type.",
        "Point a scenario at the schema with a directive on its first line (a comment, which ccsim",
        "ignores; the path is relative to the scenario file):",
        "",
        "```toml",
        f"#:schema ./{SCHEMA_FILE}",
        "```",
        "",
        "or every scenario of a directory with a `.taplo.toml` at the root of the workspace (sweep",
        "files are not scenarios: leave them out of `include`):",
        "",
        "```toml",
        "[[rule]]",
        'include = ["my-scenarios/**/*.toml"]',
        "",
        "[rule.schema]",
        f'path = "./{SCHEMA_FILE}"',
        "```",
        "",
        "Taplo also reads a `$schema` key at the top of a file, but ccsim refuses it as an unknown key:",
        "use the directive. The schema names the models the engine has registered: write it again",
        "after adding one. It checks each value's form; what needs the whole scenario (hosts that",
        "exist, a pair in range, warm-up before the end, bounds of quantities with units) is",
        "`ccsim validate`'s, whose errors also name the key where an editor may mark a whole table",
        "(the kinds of `[topology]` are alternatives: a mistake inside it is a mismatch with each).",
        "An algorithm table's parameters are checked by its `kind` (JSON Schema `if`/`then`, one",
        "definition per model), so an editor completes the `kind` names, not the parameters:",
        f"`ccsim list queue codel` and [{MODELS_DOC.removeprefix('docs/')}]({MODELS_DOC.removeprefix('docs/')}) list them.",
        "",
        "## Units",
        "",
        "| type | written as | examples |",
        "|---|---|---|",
    ]
    for kind, form in UNIT_FORMS.items():
        examples = ", ".join(f"`{e}`" for e in UNIT_EXAMPLES[kind])
        lines.append(f"| {form.title} | {_cell(form.help)} | {examples} |")
    lines += [
        "",
        "Rates are decimal (k = 1000); byte counts take decimal (KB, MB) and binary (KiB, MiB) prefixes.",
        "",
        "## Tables",
        "",
        "Each table lists its keys; *required* keys have no default, and a key without a default",
        "that is not required may be left out (its description says what that means).",
        "",
    ]
    for name, paths in _model_order(schema, models):
        title = TITLES[name]
        model = schema if name == "Scenario" else defs[name]
        lines += [f"### {title}", ""]
        where = [p for p in paths if p]
        if where and not title.startswith("`["):
            lines += ["Written at " + ", ".join(f"`{p}`" for p in where) + ".", ""]
        lines += [_doc_text(models[name].__doc__ or ""), ""]
        lines += ["| key | type | default | allowed | description |", "|---|---|---|---|---|"]
        required = set(model.get("required", ()))
        for key, prop in model["properties"].items():
            field = models[name].model_fields[key]
            default = (
                "*required*" if key in required else f"`{toml_text(prop['default'])}`" if "default" in prop else ""
            )
            cells = (f"`{key}`", _type_text(prop, models), default, _allowed_text(prop), field.description or "")
            lines.append("| " + " | ".join(_cell(c) for c in cells) + " |")
        lines.append("")
        lines += _example(name)
    lines += [
        "## Models",
        "",
        "A queue discipline, congestion control, transport, application, controller or reference",
        'signal is written as a registered name, every parameter at its default (`cc = "cubic"`), or',
        'as a table with `kind` and the parameters to change (`queue = { kind = "codel", target =',
        '"5ms" }`). The names below are those registered in the engine; their parameters, units,',
        f"defaults and ranges are in [{MODELS_DOC.removeprefix('docs/')}]({MODELS_DOC.removeprefix('docs/')}) and `ccsim list FAMILY NAME`.",
        "",
    ]
    registry = get_registry()
    for family in [*ALGO_DEFS.values(), "node"]:
        heading = _family_heading(family)
        doc = f"{MODELS_DOC.removeprefix('docs/')}#{models_anchor(family)}"
        lines += [f"### {heading}", ""]
        if family == "node":
            lines += [
                "`processing` of an explicit node, `router_processing` and `host_processing` of the other",
                f"topologies: a table of the parameters of [`processing`]({doc}).",
                "",
            ]
        else:
            names = ", ".join(f"`{n}`" for n in registry.names(family))
            lines += [f"Registered: {names}. Parameters: [{MODELS_DOC.removeprefix('docs/')}]({doc}).", ""]
        lines += _example(family)
    return "\n".join(lines).rstrip("\n") + "\n"
