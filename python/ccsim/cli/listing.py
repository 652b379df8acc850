"""``ccsim list [KIND [NAME]]``: the registered models with their parameters (tables that fit
80 columns, JSON, or the Markdown of docs/models.md), and the TCP behaviour profiles; a family
(``ccsim list cc``) or one model (``ccsim list cc cubic``) alone."""

from __future__ import annotations

import argparse
import json
from typing import Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

from ..errors import FieldError, ScenarioError, show
from ..scenario.registry import (
    FAMILY_TITLES,
    KIND_UNITS,
    ModelInfo,
    ParamInfo,
    Registry,
    VarInfo,
    every_queue_vars,
    format_param,
    get_registry,
)
from .common import EXIT_OK, _cell, _engine

# The width of the listing: narrower terminals get their own width, wider ones no more.
LIST_WIDTH = 80


def _cmd_list(args: argparse.Namespace) -> int:
    if args.markdown:
        if args.kind is not None:
            raise ScenarioError("", "", "--markdown prints every model (docs/models.md); leave out KIND and NAME")
        print(models_markdown(), end="")
        return EXIT_OK
    if args.json and args.kind is None:
        print(_engine().registry_json())
        return EXIT_OK
    registry = get_registry()
    family = None if args.kind is None else family_of(args.kind, registry)
    models = None
    if family is not None and args.name is not None:
        models = [_model(registry, family, args.name)]
    if args.json:
        names = None if models is None else {m.name for m in models}
        entries = json.loads(_engine().registry_json())
        chosen = [e for e in entries if e["family"] == family and (names is None or e["name"] in names)]
        print(json.dumps(chosen, separators=(",", ":")))
        return EXIT_OK
    console = _list_console()
    for fam in [family] if family is not None else registry.families():
        chosen = models if models is not None else registry.models(fam)
        if models is None:
            console.print(Text(f"{FAMILY_TITLES.get(fam, fam).capitalize()}s ({fam})", style="bold underline"))
            if fam == "queue":
                _print_vars(console, every_queue_vars(), "every queue: variables for traces ([trace] queue_vars)")
        if fam == "profile":
            _print_profiles(console, chosen)
            continue
        for model in chosen:
            _print_model(console, model)
        console.print()
    return EXIT_OK


def _list_console() -> Console:
    """A console at most LIST_WIDTH wide: the terminal's width below that, and LIST_WIDTH when
    the output goes to a file or a pipe (cells wrap; nothing is cut)."""
    console = Console()
    if not console.is_terminal or console.width > LIST_WIDTH:
        console = Console(width=LIST_WIDTH)
    return console


def family_of(kind: str, registry: Registry) -> str:
    """The family a ``ccsim list KIND`` names: its name or title, singular or plural
    (``queue``, ``queues``, ``cc``, ``apps``, ``applications``...)."""
    wanted = kind.strip().lower()
    for family in registry.families():
        title = FAMILY_TITLES.get(family, family)
        if wanted in (family, family + "s", title, title + "s"):
            return family
    kinds = ", ".join(registry.families())
    raise ScenarioError("", "", f"unknown kind {show(kind)} for 'ccsim list'; kinds: {kinds} (plurals work too)")


def _model(registry: Registry, family: str, name: str) -> ModelInfo:
    try:
        return registry.model(family, name)
    except FieldError as exc:  # names the model's family and lists the registered ones
        raise ScenarioError("", "", exc.message) from None


def _param_text(param: ParamInfo) -> Text:
    """How a parameter is written, its default and range, then what it is."""
    if param.kind == "choice":
        form = "one of " + ", ".join(param.choices)
    else:
        form = KIND_UNITS.get(param.kind, param.kind)
        if range_text := param.range_text():
            form += f"; range {range_text}"
    form += f"; default {format_param(param.kind, param.default)}"
    return Text(f"{form}\n{param.doc}" if param.doc else form)


def _print_model(console: Console, model: ModelInfo) -> None:
    title = f"{model.name}: {model.doc}{_model_facts(model)}"
    if not model.params:
        console.print(Text(f"  {title} (no parameters)"))
    else:
        table = Table(title=Text(title), title_justify="left", show_lines=True, expand=True)
        table.add_column("parameter", no_wrap=True)
        table.add_column("unit; range; default / description", overflow="fold", ratio=1)
        for param in model.params:
            table.add_row(_cell(param.name), _param_text(param))
        console.print(table)
    _print_vars(console, model.vars, f"{model.name}: variables for traces ([trace] {_vars_key(model.family)})")


def _vars_key(family: str) -> str:
    return "queue_vars" if family == "queue" else "flow_vars"


def _print_vars(console: Console, variables: tuple[VarInfo, ...], title: str) -> None:
    """A model's traceable variables: name, trace column and unit, what it is."""
    if not variables:
        return
    table = Table(title=Text(title), title_justify="left", show_lines=True, expand=True)
    table.add_column("variable", no_wrap=True)
    table.add_column("column; unit / description", overflow="fold", ratio=1)
    for var in variables:
        table.add_row(_cell(var.name), Text(f"{var.column}; {var.unit}\n{var.doc}"))
    console.print(table)


def _vars_markdown(variables: tuple[VarInfo, ...]) -> list[str]:
    """A Markdown table of traceable variables (empty without any)."""
    if not variables:
        return []
    lines = ["| variable for traces | column | unit | description |", "|---|---|---|---|"]
    for var in variables:
        cells = (var.name, var.column, var.unit, var.doc)
        lines.append("| " + " | ".join(str(c).replace("|", "\\|") for c in cells) + " |")
    return [*lines, ""]


# What every queue offers to the traces, said once above the disciplines.
EVERY_QUEUE_TEXT = (
    "Every queue offers these variables to `[trace] queue_vars`, whatever its discipline, besides the "
    "discipline's own below (`len` and `sojourn` are sampled for every traced queue anyway):"
)


def models_markdown() -> str:
    """Every registered model as Markdown, from the engine's registry: docs/models.md."""
    registry = get_registry()
    lines = [
        "# Models",
        "",
        "Generated by `ccsim list --markdown` from the engine's registry (a test keeps this file",
        "equal to its output). Units are those a scenario writes; `ccsim list` prints the same.",
        "",
    ]
    for family in registry.families():
        if family == "profile":
            continue
        lines += [f"## {FAMILY_TITLES.get(family, family).capitalize()}s (`{family}`)", ""]
        if family == "queue":
            lines += [EVERY_QUEUE_TEXT, "", *_vars_markdown(every_queue_vars())]
        for model in registry.models(family):
            lines += [f"### `{model.name}`", "", f"{model.doc}{_model_facts(model)}", ""]
            if model.params:
                lines += ["| parameter | unit | default | range | description |", "|---|---|---|---|---|"]
                for p in model.params:
                    cells = (
                        p.name,
                        KIND_UNITS.get(p.kind, p.kind),
                        format_param(p.kind, p.default),
                        p.range_text(),
                        p.doc,
                    )
                    lines.append("| " + " | ".join(str(c).replace("|", "\\|") for c in cells) + " |")
                lines.append("")
            lines += _vars_markdown(model.vars)
    return "\n".join(lines)


def _model_facts(model: Any) -> str:
    """What the registry says of a model besides its parameters, for ``ccsim list``."""
    facts = []
    when = model.random.get("when", "never")
    if when == "always":
        facts.append(model.random["what"])
    elif when == "unless_default":
        facts.append(f"{model.random['what']} when {model.random['param']} is not at its default")
    if model.partner_queues:
        facts.append("needs queue " + " or ".join(f"'{q}'" for q in model.partner_queues))
    return f" [{'; '.join(facts)}]" if facts else ""


def _print_profiles(console: Console, profiles: list[ModelInfo]) -> None:
    """The behaviour profiles of TCP flows, each value with its source: the transport's
    parameters, then the congestion control's (``kind``: the one a flow without ``cc`` gets)."""
    console.print(Text('  TCP flows: transport = {kind = "tcp", profile = "NAME"}; parameters given win'))
    for profile in profiles:
        if not profile.settings:
            console.print(Text(f"  {profile.name}: {profile.doc} (sets nothing)"))
            continue
        console.print(Text(f"{profile.name}: {profile.doc}"))
        for target, title in (
            ("transport", "transport parameters"),
            ("cc", "congestion control: kind for flows without cc, its parameters when they run it"),
        ):
            settings = [s for s in profile.settings if s.target == target]
            if not settings:
                continue
            table = Table(title=Text(title), title_justify="left")
            table.add_column("parameter", no_wrap=True)
            table.add_column("value", no_wrap=True)
            table.add_column("source", overflow="fold")
            for setting in settings:
                table.add_row(*map(_cell, (setting.param, setting.value_text(), setting.source)))
            console.print(table)
    console.print()
