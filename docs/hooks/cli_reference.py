"""A mkdocs hook: the CLI reference, written from the ``hsw2v`` command itself.

``docs/cli.md`` holds the line ``<!-- hsw2v: cli reference -->``; this hook puts
there, for each subcommand, its usage, its help and a table of its options with
each option's real default: click's default where it has one, else the bracketed
default in the option's help (``[the kind's]``, ``[all cores]``), so the
reference says what ``--help`` says and cannot drift from it.
"""

from __future__ import annotations

import html
import inspect
import re

import click

MARKER = "<!-- hsw2v: cli reference -->"
BRACKETED = re.compile(r"\s*\[([^\[\]]+)\]")


def _escape(text: str) -> str:
    """Help text as Markdown that shows it literally (code spans kept as code)."""
    parts = text.split("`")
    for i in range(0, len(parts), 2):
        parts[i] = re.sub(r"([\\*_|])", r"\\\1", html.escape(parts[i], quote=False))
    for i in range(1, len(parts), 2):
        parts[i] = parts[i].replace("|", "\\|")
    return "`".join(parts)


def _is_unset(value) -> bool:
    return value is None or type(value).__name__ == "Sentinel"


def option_default(param: click.Option) -> tuple[str, str]:
    """``(default, help)``: the default shown for ``param``, and its help without
    a closing bracketed default that was moved into the first."""
    help_text = " ".join((param.help or "").split())
    bracket = BRACKETED.search(help_text)
    value = param.default
    if param.is_flag and param.secondary_opts and isinstance(value, bool):
        return f"`{(param.opts if value else param.secondary_opts)[0]}`", help_text
    if param.is_flag and not param.secondary_opts:
        return "off", help_text
    if not _is_unset(value) and not (param.multiple and not value):
        shown = ", ".join(map(str, value)) if isinstance(value, (list, tuple)) else str(value)
        return f"`{shown}`", help_text
    if bracket:
        rest = (help_text[:bracket.start()] + help_text[bracket.end():]).strip()
        return _escape(bracket.group(1)), rest
    return "none", help_text


def _option_row(param: click.Option) -> str:
    names = ", ".join(f"`{o}`" for o in param.opts + param.secondary_opts)
    if param.is_flag:
        kind = "flag"
    elif isinstance(param.type, click.Choice):
        kind = " \\| ".join(f"`{c}`" for c in param.type.choices)
    else:
        kind = param.type.name + (" (repeatable)" if param.multiple else "")
    default, help_text = option_default(param)
    return f"| {names} | {kind} | {default} | {_escape(help_text)} |"


def command_reference(name: str, command: click.Command, prog: str, settings: dict) -> str:
    """One command's section: heading, usage, help, options (``settings``: the
    group's context settings, such as its help option's names)."""
    ctx = click.Context(command, info_name=f"{prog} {name}".strip(), **settings)
    usage = " ".join(command.collect_usage_pieces(ctx))
    lines = [f"## `{ctx.info_name}`", "", "```text", f"{ctx.info_name} {usage}", "```", ""]
    for paragraph in inspect.cleandoc(command.help or "").split("\n\n"):
        paragraph = paragraph.replace("\b\n", "")
        lines += [_escape(" ".join(paragraph.split())), ""]
    options = [p for p in command.get_params(ctx) if isinstance(p, click.Option)]
    lines += ["| Option | Takes | Default | What it does |", "|---|---|---|---|"]
    lines += [_option_row(p) for p in options]
    return "\n".join(lines) + "\n"


def cli_reference() -> str:
    """The reference of every ``hsw2v`` subcommand, in the order ``--help`` lists them."""
    from hsw2v.cli import cli

    ctx = click.Context(cli, info_name="hsw2v", **cli.context_settings)
    sections = [command_reference("", cli, "hsw2v", cli.context_settings)]
    sections += [command_reference(n, cli.get_command(ctx, n), "hsw2v", cli.context_settings)
                 for n in cli.list_commands(ctx)]
    return "\n".join(sections)


def on_page_markdown(markdown: str, page, **kwargs) -> str:
    if MARKER in markdown:
        markdown = markdown.replace(MARKER, cli_reference())
    return markdown
