"""Where cases run when they do not run in this process: local worker processes, or the
workers of a Dask distributed cluster.

Both take CaseTasks and yield, as cases finish and in any order, either a CaseOutcome
(execute.run_task ran) or a :class:`Lost` (the case killed its worker, or ran out of
time). The runner puts them back in submission order; nothing here prints.

Local workers are spawned, never forked: the parent has loaded the C core and OpenMP, and a
fork of a process whose OpenMP runtime has started threads can hang. Each worker sets
OMP_NUM_THREADS before it loads the core, so N workers share the machine's cores instead
of each taking all of them (oneDNN issue 2200). The parent keeps a worker one case ahead
(the next case waits in the worker while it runs one: it never idles while the parent
prints), and takes a waiting case back when another worker has nothing left to run, so
that no case waits behind a long one while a worker is free: a thread of the worker reads
its pipe while a case runs, and hands back a case it has not started (``returned``) or
says it already runs it (``kept``). The parent watches each process: a worker that dies
takes only the case it was running with it (FAILED, ``crashed: SIGSEGV``); one that
outlives --timeout is killed (``timeout after 60s``); in both cases a fresh worker takes
the cases that were waiting for it, first.

A case is sent as its position in the run: each worker is sent the tasks themselves once,
in blocks of TABLE_BLOCK pickled together (a block pickles the settings its tasks share
once), before the first position that needs the block. Pickling a task alone cost more
than running a small case.
"""

from __future__ import annotations

import ctypes
import dataclasses
import logging
import multiprocessing
import os
import pickle
import select
import signal
import threading
import time
from collections import deque
from collections.abc import Iterable, Iterator
from multiprocessing.connection import Connection

from .. import __version__, core
from ..errors import BenchError, UsageError
from . import memory
from .execute import CaseOutcome, CaseTask, run_task
from .settings import DASK_SCHEME

THREADS_ENV = "OMP_NUM_THREADS"
# How long a new worker may take to import numpy and the core before the run gives up.
START_TIMEOUT_S = 120.0
# Tasks per block of the task table a worker is sent (see the module's docstring). A block
# must fit in the pipe's buffer with room to spare: the parent sends it while the worker
# may be running a case and then sending a large outcome, and neither send may wait for
# the other. A task carries its problem and settings, so 64 of them stay at a fraction of
# a Linux pipe's buffer while sparing most of the per-task pickling cost.
TABLE_BLOCK = 64


class WorkerError(BenchError):
    """The workers cannot run cases at all (they fail to start, the cluster is gone)."""


@dataclasses.dataclass(frozen=True)
class Lost:
    """A case that produced no outcome: its worker died, or it ran out of time."""

    seq: int
    reason: str
    ms: float


def usable_cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        return os.cpu_count() or 1


def threads_per_worker(jobs: int) -> int:
    """OpenMP threads for each of ``jobs`` workers: an OMP_NUM_THREADS the user set wins;
    otherwise the cores this process may use, shared out (at least one each)."""
    given = os.environ.get(THREADS_ENV, "").strip()
    if given.isdigit() and int(given) > 0:
        return int(given)
    return max(1, usable_cores() // jobs)


# What a case whose worker was SIGKILLed from outside (a user, a scheduler, the OOM killer)
# is FAILED with: --resume runs such a case again.
KILLED_REASON = "crashed: SIGKILL"


def signal_name(exitcode: int | None) -> str:
    """``SIGSEGV`` for a process killed by signal 11; ``exit status 3`` otherwise."""
    if exitcode is not None and exitcode < 0:
        try:
            return signal.Signals(-exitcode).name
        except ValueError:
            return f"signal {-exitcode}"
    return f"exit status {exitcode}"


# --------------------------------------------------------------------------------------
# Local worker processes
# --------------------------------------------------------------------------------------

# A worker's report that the task table it was sent does not unpickle.
TABLE_ERROR = "table-error"
# The parent's request for a case it sent (``(TAKE_BACK, at)``), and the worker's answers:
# the case had not started and will not run there, or it is running (or has run) there.
TAKE_BACK = "take-back"
RETURNED = "returned"
KEPT = "kept"
# The memory guard's shared budget: a worker asks for its case's estimate (``(MEMORY,
# bytes)``) and waits for GRANTED; the parent frees it when the case's outcome arrives.
MEMORY = "memory"
GRANTED = "granted"


def _die_with_parent(parent: int) -> None:
    """Asks Linux to SIGKILL this process when its parent dies (a killed run must not
    leave workers computing a case nobody will read); elsewhere, a no-op."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        pr_set_pdeathsig = 1
        libc.prctl(pr_set_pdeathsig, signal.SIGKILL)
    except (OSError, AttributeError):  # pragma: no cover - not Linux
        return
    if os.getppid() != parent:   # it died before the request took effect
        os._exit(1)


class _Inbox:
    """A worker's side of its pipe. A thread reads it all the time, also while a case runs
    (the kernels and numpy release the GIL), so the parent can take back a case that waits
    here, and a send from the parent never waits for the case to end."""

    def __init__(self, conn: Connection) -> None:
        self.conn = conn
        self._cond = threading.Condition()
        self._send_lock = threading.Lock()
        self._table: dict[int, CaseTask] = {}   # the run's tasks by position, as sent
        self._waiting: deque[int] = deque()     # positions sent to run here, not started
        self._closed = False                    # told to exit, or the parent is gone
        self._table_error = ""
        self._granted = False
        threading.Thread(target=self._read, daemon=True, name="benchdnn-py inbox").start()

    def send(self, message) -> None:
        with self._send_lock:
            self.conn.send(message)

    def ask_memory(self, nbytes: int) -> None:
        """Waits until the parent grants nbytes of the run's budget (memory.Budget)."""
        with self._cond:
            self._granted = False
        self.send((MEMORY, nbytes))
        with self._cond:
            self._cond.wait_for(lambda: self._granted or self._closed)
            if not self._granted:   # the parent is gone: the case ends with the process
                raise EOFError

    def next_task(self) -> CaseTask | None:
        """The next case to run; None when the worker should exit."""
        with self._cond:
            self._cond.wait_for(lambda: self._waiting or self._closed or self._table_error)
            if self._table_error:
                # A table that does not load is a defect of this program, not of a case:
                # every replacement worker would fail the same way.
                self.send((TABLE_ERROR, self._table_error))
                return None
            if not self._waiting:
                return None
            return self._table.pop(self._waiting.popleft())

    def _read(self) -> None:
        try:
            while True:
                message = self.conn.recv()
                with self._cond:
                    if message is None:
                        self._closed = True
                    elif isinstance(message, int):
                        self._waiting.append(message)
                    elif message == GRANTED:
                        self._granted = True
                    elif message[0] == TAKE_BACK:
                        self._take_back(message[1])
                    else:
                        self._add_block(*message)
                    self._cond.notify_all()
                    if self._closed or self._table_error:
                        return
        except (EOFError, OSError):
            with self._cond:   # the parent is gone (killed): nobody is left to report to
                self._closed = True
                self._cond.notify_all()

    def _take_back(self, at: int) -> None:
        if at in self._waiting:
            # Its row stays in the table: the parent may hand the case back here later,
            # without resending a block this worker already has.
            self._waiting.remove(at)
            self.send((RETURNED, at))
        else:
            self.send((KEPT, at))

    def _add_block(self, first: int, blob: bytes) -> None:
        try:
            rows = pickle.loads(blob)
        except Exception as exc:   # noqa: BLE001 - reported, whatever it is
            self._table_error = f"{type(exc).__name__}: {exc}"
            return
        self._table.update(enumerate(rows, start=first))


def _worker_main(conn: Connection, threads: int, jobs: int, parent: int) -> None:
    """A worker: set the thread count, load the core, then run the cases it is sent until
    it is sent None. Ctrl-C is the parent's business (it stops the run and kills the
    workers), so a worker ignores SIGINT; the parent also blocked it while spawning."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _die_with_parent(parent)
    try:
        inbox = _Inbox(conn)
        memory.set_budget(inbox.ask_memory, jobs)   # the run's, which the parent keeps
        memory.keep_freed_memory(memory.budget().keep)
        inbox.send("ready")
        while True:
            task = inbox.next_task()
            if task is None:
                return
            inbox.send(run_task(task))
    except (EOFError, OSError):
        return   # the parent is gone (killed): nobody is left to report to


class _Worker:
    """A spawned worker process and the cases handed to it (positions in the run), in the
    order it runs them: the first is running (since ``since``), the rest wait in its
    pipe."""

    def __init__(self, ctx, threads: int, jobs: int) -> None:
        self.conn, child = ctx.Pipe()
        self.process = ctx.Process(target=_worker_main,
                                   args=(child, threads, jobs, os.getpid()),
                                   daemon=True, name="benchdnn-py worker")
        # The environment and the blocked SIGINT are inherited through the spawn: OpenMP
        # reads its thread count when the core is loaded, which unpickling the worker's
        # arguments may already do; and a Ctrl-C at the terminal (sent to the whole process
        # group) never reaches a starting worker.
        old = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
        saved = os.environ.get(THREADS_ENV)
        os.environ[THREADS_ENV] = str(threads)
        try:
            self.process.start()
        finally:
            if saved is None:
                del os.environ[THREADS_ENV]
            else:
                os.environ[THREADS_ENV] = saved
            signal.pthread_sigmask(signal.SIG_SETMASK, old)
        child.close()
        self.fds = (self.conn.fileno(), self.process.sentinel)
        self.ready = False
        self.started = time.monotonic()
        self.tasks: deque[int] = deque()
        self.blocks: set[int] = set()     # the blocks of the task table it has been sent
        self.since = 0.0
        self.recalling: int | None = None  # a waiting case asked back, not answered yet
        self.held = 0                      # bytes of the budget its running case holds
        self.wants: int | None = None      # bytes its running case waits for
        self.asked = 0.0                   # when it asked (the first to ask goes first)

    def give(self, at: int, block_blob) -> None:
        """Sends the case at position ``at``, after its block of the task table if this
        worker does not have it yet (block_blob(block) pickles it)."""
        block = at // TABLE_BLOCK
        if not self.tasks:
            self.since = time.monotonic()
        self.tasks.append(at)
        try:
            if block not in self.blocks:
                self.conn.send((block * TABLE_BLOCK, block_blob(block)))
                self.blocks.add(block)
            self.conn.send(at)
        except OSError:
            # It died after its last report (the case it runs now crashed it) and the
            # parent has not seen its death yet: the next wait does, and the case sent
            # here goes back to the queue with the others that were waiting for it.
            pass

    def finished(self) -> None:
        """Its running case reported (freeing its memory); the next one starts now."""
        self.tasks.popleft()
        self.since = time.monotonic()
        self.held, self.wants = 0, None

    def waiting(self) -> int:
        """Cases it holds that have not started and are not being asked back."""
        return max(0, len(self.tasks) - 1 - (self.recalling is not None))

    def take_back(self) -> None:
        """Asks for its last waiting case (answered RETURNED or KEPT)."""
        self.recalling = self.tasks[-1]
        try:
            self.conn.send((TAKE_BACK, self.recalling))
        except OSError:
            pass   # it died: the next wait sees it, and the case goes back to the queue

    def kill(self) -> None:
        if self.process.is_alive():
            self.process.kill()
        self.process.join()
        self.conn.close()

    def retire(self) -> None:
        """Asks the worker to exit (it finishes nothing: it is idle)."""
        try:
            self.conn.send(None)
        except OSError:
            pass

    def stop(self) -> None:
        self.process.join(timeout=5)
        self.kill()


class LocalPool:
    """``jobs`` spawned worker processes, each running one case at a time with up to
    ``AHEAD`` more waiting in its pipe. start() spawns them early, so that they import
    numpy and the core while the parent is still planning."""

    AHEAD = 1

    def __init__(self, jobs: int, timeout: float = 0.0) -> None:
        self.taken_back = 0   # waiting cases moved to a free worker
        self.jobs, self.timeout = jobs, timeout
        self.threads = threads_per_worker(jobs)
        self._ctx = multiprocessing.get_context("spawn")
        # The memory guard's budget, which the workers' cases share: together they never
        # hold more than one process may (memory.Budget).
        self.budget = memory.Budget(jobs=jobs)
        self._workers: list[_Worker] = []
        # One poll set for the run, kept as workers come and go: building one per wait
        # cost more than the wait's own work.
        self._poll = select.poll()
        self._table: list[CaseTask] = []
        self._blobs: dict[int, bytes] = {}

    def describe(self) -> str:
        return (f"{self.jobs} worker process{'es' if self.jobs > 1 else ''} x "
                f"{self.threads} OpenMP thread{'s' if self.threads > 1 else ''}")

    def start(self) -> None:
        """Spawns the workers now (run() spawns those not started yet)."""
        while len(self._workers) < self.jobs:
            self._workers.append(self._spawn())

    def close(self) -> None:
        """Kills workers that start() spawned and no run() used."""
        for w in self._workers:
            self._forget(w)
            w.kill()
        self._workers = []

    def run(self, tasks: Iterable[CaseTask]) -> Iterator[CaseOutcome | Lost]:
        self._table, self._blobs = list(tasks), {}
        queue = deque(range(len(self._table)))
        retired: list[_Worker] = []
        try:
            for w in self._workers[len(queue):]:   # started, but more than there are cases
                self._forget(w)
                w.kill()
            del self._workers[len(queue):]
            while len(self._workers) < min(self.jobs, len(queue)):
                self._workers.append(self._spawn())
            while self._workers:
                # Ahead only while every worker has a case to come: the last cases go to
                # whichever worker is free first.
                depth = 1 + (self.AHEAD if len(queue) > len(self._workers) else 0)
                for w in self._workers:
                    while w.ready and queue and len(w.tasks) < depth:
                        w.give(queue.popleft(), self._block_blob)
                idle = [w for w in self._workers if w.ready and not w.tasks]
                if not queue and idle:
                    self._take_back(len(idle))
                    if not any(len(w.tasks) > 1 for w in self._workers):
                        for w in idle:   # nothing is left that it could run
                            w.retire()
                            self._forget(w)
                            self._workers.remove(w)
                            retired.append(w)
                if self._workers:
                    self._grant()
                    yield from self._wait(queue)
        finally:
            for w in self._workers:
                self._forget(w)
                w.kill()
            for w in retired:
                w.stop()
            self._workers = []

    def _take_back(self, free: int) -> None:
        """Asks for waiting cases, one for each free worker that no earlier request is
        already meant for, from the workers holding the most."""
        free -= sum(w.recalling is not None for w in self._workers)
        while free > 0:
            holder = max(self._workers, key=_Worker.waiting)
            if not holder.waiting():
                return
            holder.take_back()
            free -= 1

    def _grant(self) -> None:
        """Grants the cases that asked for memory theirs, first asked first, while the
        budget has room beside what the other workers hold (memory.Budget)."""
        for w in sorted((w for w in self._workers if w.wants is not None),
                        key=lambda w: w.asked):
            if not self.budget.grantable(w.wants, [x.held for x in self._workers
                                                   if x is not w]):
                return
            w.held, w.wants = w.wants, None
            try:
                w.conn.send(GRANTED)
            except OSError:
                pass   # it died: the next wait sees it

    def _block_blob(self, block: int) -> bytes:
        """Block ``block`` of the task table, pickled once for every worker."""
        blob = self._blobs.get(block)
        if blob is None:
            rows = self._table[block * TABLE_BLOCK:(block + 1) * TABLE_BLOCK]
            blob = self._blobs[block] = pickle.dumps(rows, pickle.HIGHEST_PROTOCOL)
        return blob

    def _spawn(self) -> _Worker:
        w = _Worker(self._ctx, self.threads, self.jobs)
        for fd in w.fds:
            self._poll.register(fd, select.POLLIN)
        return w

    def _forget(self, w: _Worker) -> None:
        """Stops watching w (retired or killed); a closed pipe would poll ready forever."""
        for fd in w.fds:
            try:
                self._poll.unregister(fd)
            except KeyError:
                pass

    def _wait(self, queue: deque[int]) -> Iterator[CaseOutcome | Lost]:
        """Waits for the first worker event (a message, a death, a deadline)."""
        deadlines = [w.since + self.timeout for w in self._workers
                     if w.tasks and self.timeout]
        deadlines += [w.started + START_TIMEOUT_S for w in self._workers if not w.ready]
        wait_ms = (max(0.0, min(deadlines) - time.monotonic()) * 1e3 if deadlines
                   else None)
        ready = {fd for fd, _ in self._poll.poll(wait_ms)}
        for w in list(self._workers):
            if not ready.isdisjoint(w.fds):
                try:
                    message = w.conn.recv() if w.conn.poll() else None
                except (EOFError, OSError):
                    message = None
                if message is None:    # the worker died; its exit status names the signal
                    w.process.join(timeout=5)
                    yield from self._replace(w, f"crashed: {signal_name(w.process.exitcode)}",
                                             queue)
                elif message == "ready":
                    w.ready = True
                elif isinstance(message, tuple) and message[0] == MEMORY:
                    w.wants, w.asked = message[1], time.monotonic()
                elif isinstance(message, tuple) and message[0] in (RETURNED, KEPT):
                    w.recalling = None
                    if message[0] == RETURNED:
                        w.tasks.remove(message[1])
                        queue.appendleft(message[1])
                        self.taken_back += 1
                elif isinstance(message, tuple) and message[0] == TABLE_ERROR:
                    raise WorkerError(f"a worker process could not read the cases it was "
                                      f"sent ({message[1]}); run without --jobs and "
                                      f"--timeout to see why")
                else:
                    w.finished()
                    yield message
            elif (w.tasks and self.timeout
                  and time.monotonic() - w.since >= self.timeout):
                yield from self._replace(w, f"timeout after {self.timeout:g}s", queue)
            elif not w.ready and time.monotonic() - w.started >= START_TIMEOUT_S:
                raise WorkerError(f"a worker process did not start within "
                                  f"{START_TIMEOUT_S:g} s")

    def _replace(self, w: _Worker, reason: str, queue: deque[int]) -> Iterator[Lost]:
        """Ends worker w; the case it was running, if any, is lost for ``reason``; the
        cases waiting in its pipe go back to the front of the queue, and a fresh worker
        takes its place while cases remain."""
        self._forget(w)
        w.kill()
        if not w.ready:
            raise WorkerError(f"a worker process failed to start ({reason}); run without "
                              f"--jobs and --timeout to see why")
        lost = w.tasks.popleft() if w.tasks else None
        queue.extendleft(reversed(w.tasks))
        if queue:
            self._workers[self._workers.index(w)] = self._spawn()
        else:
            self._workers.remove(w)
        if lost is not None:
            yield Lost(self._table[lost].seq, reason, (time.monotonic() - w.since) * 1e3)


# --------------------------------------------------------------------------------------
# A Dask distributed cluster
# --------------------------------------------------------------------------------------

CONNECT_TIMEOUT_S = 10
INSTALL_HINT = "python -m pip install 'benchdnn-py[dask]'"


def _probe() -> tuple[str, str]:
    """Runs on a Dask worker: the benchdnn-py version and core build it would use."""
    return __version__, core.build_info()


class DaskPool:
    """Sends every case to an existing Dask distributed scheduler (``dask://HOST:PORT``)
    as one task running execute.run_task, and yields the outcomes as they come back.

    The workers must have the same benchdnn-py installed (checked by a probe task before
    the cases are sent). A case that kills its worker comes back as KilledWorker once the
    scheduler gives up on it (after ``distributed.scheduler.allowed-failures`` retries, each
    on a fresh worker). The scheduler charges a death to every case the worker held, so
    such cases run again one at a time at the end: a case that kills its worker alone is
    FAILED, ``crashed: its Dask worker died``.
    """

    def __init__(self, url: str) -> None:
        try:
            import distributed
        except ImportError:
            raise UsageError(f"--executor={url}: needs the `distributed` package, which is "
                             f"not installed; install it with: {INSTALL_HINT}") from None
        logging.getLogger("distributed").setLevel(logging.ERROR)
        self.url = url
        self.address = "tcp://" + url[len(DASK_SCHEME):]
        try:
            self.client = distributed.Client(self.address, timeout=CONNECT_TIMEOUT_S,
                                             set_as_default=False)
        except (OSError, TimeoutError) as exc:
            raise WorkerError(f"--executor={url}: cannot reach a Dask scheduler at "
                              f"{self.address} ({type(exc).__name__}: "
                              f"{str(exc).splitlines()[0] if str(exc) else 'no answer'})") from None
        try:
            theirs = self.client.submit(_probe, pure=False).result(timeout=120)
        except Exception as exc:  # noqa: BLE001 - any failure means the workers are unusable
            self.close()
            raise WorkerError(f"--executor={url}: the Dask workers cannot run benchdnn-py "
                              f"({type(exc).__name__}: {exc}); install it there") from None
        ours = (__version__, core.build_info())
        if theirs != ours:
            self.close()
            raise WorkerError(f"--executor={url}: the Dask workers run benchdnn-py "
                              f"{theirs[0]} ({theirs[1]}), this is {ours[0]} ({ours[1]})")

    def describe(self) -> str:
        workers = len(self.client.scheduler_info().get("workers", {}))
        return f"Dask cluster at {self.address} ({workers} workers)"

    def run(self, tasks: Iterable[CaseTask]) -> Iterator[CaseOutcome | Lost]:
        from distributed import as_completed

        tasks = list(tasks)
        if not tasks:
            return
        futures = self.client.map(run_task, tasks, pure=False)
        task_of = {f.key: t for f, t in zip(futures, tasks)}
        suspects: list[CaseTask] = []
        try:
            for future in as_completed(futures, loop=self.client.loop):
                task = task_of[future.key]
                try:
                    yield future.result()
                except Exception as exc:  # noqa: BLE001 - the case's verdict, not the run's
                    if type(exc).__name__ == "KilledWorker":
                        suspects.append(task)
                    else:
                        yield Lost(task.seq, f"Dask task failed: {type(exc).__name__}", 0.0)
            # A worker's death is charged to every case it held, so run each suspect again
            # alone: one that kills its worker on its own is the culprit; the others pass.
            for task in suspects:
                future = self.client.submit(run_task, task, pure=False)
                futures.append(future)
                try:
                    yield future.result()
                except Exception as exc:  # noqa: BLE001
                    reason = ("crashed: its Dask worker died"
                              if type(exc).__name__ == "KilledWorker"
                              else f"Dask task failed: {type(exc).__name__}")
                    yield Lost(task.seq, reason, 0.0)
        finally:
            self.client.cancel(futures)

    def close(self) -> None:
        self.client.close()
