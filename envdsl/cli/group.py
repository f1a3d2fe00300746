"""Command-line plumbing every command shares: the group and its one-line usage errors, exit codes,
option groups, and how output is written."""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING, Any, Callable, NoReturn

import click

from envdsl import __version__
from envdsl.util.collector import collect_less_often

if TYPE_CHECKING:
    from envdsl.util.backends import Backend


EXIT_OK = 0


EXIT_ERRORS = 1


EXIT_USAGE = 2


def fail_usage(message: str) -> NoReturn:
    click.echo(f"envdsl: error: {message}", err=True)
    sys.exit(EXIT_USAGE)


class Group(click.Group):
    """Usage errors in one line on stderr (`envdsl: error: ...`, exit 2), as every other
    usage error, instead of click's usage block."""

    def main(self, *args: Any, **kwargs: Any) -> Any:
        kwargs["standalone_mode"] = False
        try:
            code = super().main(*args, **kwargs)
        except click.UsageError as error:
            message = " ".join(error.format_message().split())
            command = error.ctx.command_path if error.ctx is not None else "envdsl"
            hint = f" (see '{command} --help')" if "--help" not in message else ""
            fail_usage(message + hint)
        except click.ClickException as error:
            error.show()
            sys.exit(error.exit_code)
        except click.Abort:
            click.echo("Aborted!", err=True)
            sys.exit(EXIT_ERRORS)
        sys.exit(code if isinstance(code, int) else EXIT_OK)


@click.group(cls=Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, "--version", "-V", prog_name="envdsl")
def main() -> None:
    """envdsl: a typed DSL and compiler for tool-interaction environments of LLM agents."""
    collect_less_often()


text_or_json = click.option(
    "--format",
    "output_format",
    type=click.Choice(["text", "json"]),
    default="text",
    show_default=True,
    help="text for people; json for tools.",
)


def option_group(options: list[Any]) -> Callable[[Any], Any]:
    """One decorator applying a group of click options that several commands share."""

    def apply(function: Any) -> Any:
        for option in reversed(options):
            function = option(function)
        return function

    return apply


_backend_options = [
    click.option(
        "--backend",
        type=click.Choice(["local", "ray"]),
        default="local",
        show_default=True,
        help="local: processes and threads here; ray: one Ray task per item (pip install "
        "'envdsl[ray]').",
    ),
    click.option(
        "--address",
        help="With --backend ray: the cluster (ray://HEAD:10001, or auto on a cluster node); "
        "default $RAY_ADDRESS, else a local Ray.",
    ),
]


backend_option = option_group(_backend_options)


def make_backend(kind: str, address: str | None, concurrency: int, processes: int = 1) -> "Backend":
    from envdsl.util.backends import Backend

    if address is not None and kind != "ray":
        fail_usage("--address is for --backend ray")
    return Backend(kind, concurrency=concurrency, processes=processes, address=address)


def stdout_color(flag: bool | None) -> bool:
    if flag is not None:
        return flag
    if os.environ.get("NO_COLOR"):
        return False
    return sys.stdout.isatty()


def stderr_color(flag: bool | None) -> bool:
    if flag is not None:
        return flag
    return not os.environ.get("NO_COLOR") and sys.stderr.isatty()


def encodable(text: str) -> str:
    """Text that UTF-8 can encode: a lone surrogate from a call's JSON (`"\\ud800"`) is
    printed as that escape instead of ending the command with a traceback."""
    if text.isascii():
        return text
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


def one_line(error: Exception) -> str:
    text = " ".join(str(error).split())
    return text if len(text) <= 300 else text[:297] + "..."
