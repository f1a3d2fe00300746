"""Where batch work runs: threads and processes on this machine, or Ray tasks on a cluster.

`ordered_map(fn, items, backend, on_error)` calls `fn(item)` for every item and yields the
results in input order, each as soon as every item before it is done, with a bounded number of
items in flight (so a run of a million items holds a few of them in memory, and an interrupted
run has written everything up to the interruption). `fn` must be picklable for processes and
Ray: a module-level function, or a functools.partial of one over picklable data. An item whose
call raises anyway, or whose worker dies, gets `on_error(item, error)` as its result.

Ray is imported only here and only for `kind="ray"` (`pip install 'envdsl[ray]'`). Without an
address, `ray.init()` joins the cluster named by $RAY_ADDRESS or starts a local one; a running
Ray (the caller's `ray.init(...)`) is used as it is.
"""

from __future__ import annotations

import math
from collections import deque
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Iterator, Sequence, TypeVar

if TYPE_CHECKING:
    from concurrent.futures import Future

T = TypeVar("T")
R = TypeVar("R")

LOCAL = "local"
RAY = "ray"


class BackendError(Exception):
    """The backend cannot be used (Ray missing, a cluster that cannot be reached)."""


@dataclass(frozen=True, slots=True)
class Backend:
    kind: str = LOCAL
    concurrency: int = 1  # items in flight at once (ray, 0: twice the cluster's CPUs)
    processes: int = 1  # local: worker processes (1: threads in this process)
    address: str | None = None  # ray: the cluster (ray://host:10001, auto, host:6379)


def ordered_map(
    fn: Callable[[T], R],
    items: Sequence[T],
    backend: Backend,
    on_error: Callable[[T, BaseException], R],
) -> Iterator[R]:
    if not items:  # nothing to do: no pool, no cluster to start
        return iter(())
    if backend.kind == RAY:
        return _ray_map(connect_ray(backend.address), fn, items, backend, on_error)
    if backend.processes > 1 and len(items) > 1:
        return _process_map(fn, items, backend, on_error)
    return _thread_map(fn, items, backend.concurrency, on_error)


def _in_order(
    submit: Callable[[int], Any], count: int, window: int, result: Callable[[int, Any], R]
) -> Iterator[R]:
    """Submit items 0..count-1 with at most `window` in flight; yield `result(index, handle)`
    for each in order (the handle is what `submit` returned: a future, a Ray reference)."""
    pending: deque[tuple[int, Any]] = deque()
    following = 0
    while following < count or pending:
        while following < count and len(pending) < window:
            pending.append((following, submit(following)))
            following += 1
        index, handle = pending.popleft()
        yield result(index, handle)


def _thread_map(
    fn: Callable[[T], R],
    items: Sequence[T],
    threads: int,
    on_error: Callable[[T, BaseException], R],
) -> Iterator[R]:
    if threads <= 1 or len(items) <= 1:
        for item in items:
            yield _guarded(fn, item, on_error)
        return

    from concurrent.futures import ThreadPoolExecutor

    def result(index: int, future: Future[R]) -> R:
        return future.result()

    pool = ThreadPoolExecutor(threads)
    try:
        yield from _in_order(
            lambda i: pool.submit(_guarded, fn, items[i], on_error), len(items), 2 * threads, result
        )
    finally:  # the consumer stopped early (Ctrl-C): drop what has not started
        pool.shutdown(wait=False, cancel_futures=True)


def _guarded(fn: Callable[[T], R], item: T, on_error: Callable[[T, BaseException], R]) -> R:
    try:
        return fn(item)
    except Exception as error:
        return on_error(item, error)


# ---- processes: chunks of items, each run on the threads of one worker process ---------------

_worker_fn: Callable[[Any], Any] | None = None
_worker_threads = 1


def _install(fn: Callable[[Any], Any], threads: int) -> None:
    """Worker initializer: the function travels once per process, not once per item."""
    import signal

    global _worker_fn, _worker_threads
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle
    _exit_with_parent()
    _worker_fn, _worker_threads = fn, threads


PARENT_POLL_S = 0.5


def _exit_with_parent() -> None:
    """A worker whose parent is killed (kill -9 of `envdsl rollout`) would live on forever,
    reparented and blocked on a queue no one writes: it exits as soon as its parent is gone.
    Linux delivers SIGKILL then (PR_SET_PDEATHSIG); since that follows the thread that forked,
    not the process, and exists on Linux only, a daemon thread also watches the parent id."""
    import multiprocessing
    import os
    import threading
    import time

    known = multiprocessing.parent_process()  # the pid the pool had: a dead one reads as 1
    parent = known.pid if known is not None and known.pid is not None else os.getppid()
    try:
        import ctypes
        import signal

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGKILL, 0, 0, 0)  # 1: PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass  # not Linux: the thread alone
    if os.getppid() != parent:  # the parent died before the signal was armed
        os._exit(1)

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(PARENT_POLL_S)
        os._exit(1)  # no cleanup to run: the results have no one to go to

    threading.Thread(target=watch, name="exit-with-parent", daemon=True).start()


def _run_chunk(chunk: Sequence[Any]) -> list[Any]:
    from concurrent.futures import ThreadPoolExecutor

    assert _worker_fn is not None
    fn = _worker_fn
    if len(chunk) <= 1 or _worker_threads <= 1:
        return [fn(item) for item in chunk]
    with ThreadPoolExecutor(min(_worker_threads, len(chunk))) as pool:
        return list(pool.map(fn, chunk))


def _process_map(
    fn: Callable[[T], R],
    items: Sequence[T],
    backend: Backend,
    on_error: Callable[[T, BaseException], R],
) -> Iterator[R]:
    from concurrent.futures import ProcessPoolExecutor

    threads = max(1, math.ceil(backend.concurrency / backend.processes))
    chunks = [items[i : i + threads] for i in range(0, len(items), threads)]

    def result(index: int, future: Future[list[R]]) -> list[R]:
        try:
            return future.result()
        except Exception as error:  # the worker died, or a result that cannot be pickled
            return [on_error(item, error) for item in chunks[index]]

    pool = ProcessPoolExecutor(
        backend.processes, initializer=_install, initargs=(_Guarded(fn, on_error), threads)
    )
    try:
        for results in _in_order(
            lambda i: pool.submit(_run_chunk, chunks[i]), len(chunks), 2 * backend.processes, result
        ):
            yield from results
    finally:  # the consumer stopped early (Ctrl-C): drop the chunks that have not started
        pool.shutdown(wait=True, cancel_futures=True)


@dataclass(frozen=True, slots=True)
class _Guarded:
    """fn with its error handler, as one picklable callable."""

    fn: Callable[[Any], Any]
    on_error: Callable[[Any, BaseException], Any]

    def __call__(self, item: Any) -> Any:
        return _guarded(self.fn, item, self.on_error)


# ---- Ray: one task per item ------------------------------------------------------------------


def _ray() -> Any:
    try:
        import ray
    except ImportError as error:
        raise BackendError(
            f"--backend ray needs Ray ({error}): pip install 'envdsl[ray]'"
        ) from None
    return ray


def connect_ray(address: str | None) -> Any:
    """The ray module, initialized: the caller's running Ray, else the cluster at `address`
    (None: $RAY_ADDRESS, else a new local one)."""
    import logging

    ray = _ray()
    if not ray.is_initialized():
        _probe(address)
        try:
            ray.init(address=address, logging_level=logging.WARNING, log_to_driver=False)
        except Exception as error:  # ConnectionError, a bad address, a version mismatch
            where = f"the Ray cluster at {address}" if address else "Ray"
            message = " ".join(str(error).split())[:300]
            raise BackendError(f"cannot start or reach {where}: {message}") from None
    return ray


def _probe(address: str | None, timeout: float = 5.0) -> None:
    """Fail fast on a host:port nothing listens on: Ray itself retries for minutes."""
    import socket

    if address is None or ":" not in address:  # None, auto, local: nothing to reach
        return
    host, _, port = address.removeprefix("ray://").rpartition(":")
    if not port.isdigit():
        return
    try:
        socket.create_connection((host.strip("[]"), int(port)), timeout=timeout).close()
    except OSError as error:
        reason = error.strerror or type(error).__name__
        raise BackendError(f"cannot reach the Ray cluster at {address}: {reason}") from None


def _call(fn: Callable[[T], R], item: T) -> R:
    return fn(item)


def _ray_map(
    ray: Any,
    fn: Callable[[T], R],
    items: Sequence[T],
    backend: Backend,
    on_error: Callable[[T, BaseException], R],
) -> Iterator[R]:
    in_flight = backend.concurrency or 2 * max(1, int(ray.cluster_resources().get("CPU", 1)))
    remote = ray.remote(max_retries=1)(_call)
    shared = ray.put(_Guarded(fn, on_error))  # sent to the cluster once, not once per task

    def result(index: int, reference: Any) -> R:
        try:
            return ray.get(reference)  # type: ignore[no-any-return]
        except Exception as error:  # a dead worker or node (RayTaskError, WorkerCrashedError)
            return on_error(items[index], error)

    yield from _in_order(lambda i: remote.remote(shared, items[i]), len(items), in_flight, result)
