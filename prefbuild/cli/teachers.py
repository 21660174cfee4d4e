"""Commands around teachers: ``prefbuild serve`` and ``prefbuild models``.

``serve`` exposes the launcher the ``vllm`` teacher uses, so a user can run one server by
hand and point several recipes (``backend: openai``) at it; ``models`` prepares the
embedded model ahead of time (for example while building a container image).
"""

from __future__ import annotations

import signal
import threading
import time
from types import FrameType

import click

from prefbuild.cli.errors import PrefbuildCommand, PrefbuildGroup
from prefbuild.teachers.base import TeacherError
from prefbuild.teachers.embedded import (
    ModelError,
    embedded_model_dir,
    ensure_embedded_model,
    is_prepared,
    resolve_model,
)
from prefbuild.teachers.vllm_launcher import VllmServer

__all__ = ["models_command", "serve_command"]


def _interrupt(signum: int, frame: FrameType | None) -> None:
    raise KeyboardInterrupt


def _smoke_test(server: VllmServer) -> str:
    import httpx

    response = httpx.post(
        f"{server.base_url}/chat/completions",
        json={
            "model": server.served_model_name,
            "messages": [{"role": "user", "content": "Say hello in five words."}],
            "max_tokens": 16,
            "temperature": 0,
        },
        timeout=120,
    )
    response.raise_for_status()
    return str(response.json()["choices"][0]["message"]["content"])


@click.command("serve", cls=PrefbuildCommand, context_settings={"ignore_unknown_options": True})
@click.argument("model")
@click.argument("vllm_args", nargs=-1, type=click.UNPROCESSED)
@click.option("--host", default="127.0.0.1", show_default=True, help="Interface to bind.")
@click.option("--port", type=int, default=None, help="Port to listen on (default: a free one).")
@click.option("--log-file", type=click.Path(dir_okay=False), default=None, help="Where the server log goes.")
@click.option("--startup-timeout", type=float, default=900.0, show_default=True, help="Seconds to wait for /health.")
@click.option("--smoke-test", is_flag=True, help="Start, answer one chat request, print it, stop.")
def serve_command(
    model: str,
    vllm_args: tuple[str, ...],
    host: str,
    port: int | None,
    log_file: str | None,
    startup_timeout: float,
    smoke_test: bool,
) -> None:
    """Serve MODEL with vLLM on an OpenAI-compatible API until Ctrl+C.

    MODEL is a folder, a Hugging Face id or `embedded` (the bundled SmolLM2-135M-Instruct).
    Arguments after `--` go to `vllm serve` unchanged.

    \b
    Examples:
      prefbuild serve embedded --port 8000
      prefbuild serve Qwen/Qwen3-30B-A3B-Instruct-2507 -- --max-model-len 16384
    """
    try:
        path, served_name = resolve_model(model)
    except ModelError as error:
        raise click.ClickException(str(error)) from None
    server = VllmServer(
        path,
        served_model_name=served_name,
        host=host,
        port=port,
        args=list(vllm_args),
        log_path=log_file,
        startup_timeout_s=startup_timeout,
    )
    # SIGTERM (docker stop, kill) must stop the server too; handlers only exist in the main thread.
    in_main_thread = threading.current_thread() is threading.main_thread()
    previous = signal.signal(signal.SIGTERM, _interrupt) if in_main_thread else None
    try:
        click.echo(f"starting vLLM for {served_name} (log: {server.log_path or 'a temporary file'}) ...", err=True)
        server.start()
        click.echo(f"serving {served_name!r} at {server.base_url} (pid {server.pid}, log: {server.log_path})")
        if smoke_test:
            click.echo(f"smoke test reply: {_smoke_test(server)!r}")
            return
        click.echo("press Ctrl+C to stop", err=True)
        while server.is_running():
            time.sleep(1.0)
        raise click.ClickException(f"the vLLM server stopped on its own; last lines of its log:\n{server.log_tail()}")
    except KeyboardInterrupt:
        click.echo("stopping the vLLM server ...", err=True)
    except TeacherError as error:
        raise click.ClickException(str(error)) from None
    finally:
        server.stop()
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)


@click.group("models", cls=PrefbuildGroup)
def models_command() -> None:
    """The embedded teacher model (SmolLM2-135M-Instruct, converted from the bundled GGUF).

    \b
    Examples:
      prefbuild models prepare
      prefbuild models path
    """


@models_command.command("prepare")
def prepare_command() -> None:
    """Convert the embedded model now (otherwise done on first use) and print its folder."""
    try:
        path = ensure_embedded_model()
    except ModelError as error:
        raise click.ClickException(str(error)) from None
    click.echo(str(path))


@models_command.command("path")
def path_command() -> None:
    """Print the embedded model's folder; exit code 1 while it is not prepared yet."""
    click.echo(str(embedded_model_dir()))
    if not is_prepared():
        click.echo("not prepared yet: run `prefbuild models prepare`", err=True)
        raise SystemExit(1)
